package io.watchfanout.fanout.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RangeResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.watchfanout.fanout.watch.CurrentRevision;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * etcd's current revision, asked of etcd with one count-only read of a single key (the header of
 * any answer carries the store's revision): what a consistent read from the cache waits for,
 * as kube-apiserver's consistent reads from its watch cache do (KEP-2340). Thread-safe.
 */
public final class EtcdRevisionProbe implements CurrentRevision {
    private static final RangeRequest PROBE = RangeRequest.newBuilder()
            .setKey(ByteString.copyFrom(new byte[] {0}))
            .setCountOnly(true)
            .build();

    private final Channel etcd;
    private final Duration timeout;
    /** Where etcd's cluster id and raft term are learned from each answer, or null. */
    private final EtcdHeaders headers;

    /**
     * @param etcd the node's channel to etcd
     * @param timeout how long one probe may take
     */
    public EtcdRevisionProbe(Channel etcd, Duration timeout) {
        this(etcd, timeout, null);
    }

    /** As above, each answer's header also teaching {@code headers} etcd's cluster id and raft term. */
    EtcdRevisionProbe(Channel etcd, Duration timeout, EtcdHeaders headers) {
        this.etcd = etcd;
        this.timeout = timeout;
        this.headers = headers;
    }

    @Override
    public CompletableFuture<Long> current() {
        CompletableFuture<Long> f = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(
                etcd.newCall(
                        KVGrpc.getRangeMethod(),
                        CallOptions.DEFAULT.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)),
                PROBE,
                new StreamObserver<RangeResponse>() {
                    @Override
                    public void onNext(RangeResponse r) {
                        if (headers != null) {
                            headers.learn(r.getHeader());
                        }
                        f.complete(r.getHeader().getRevision());
                    }

                    @Override
                    public void onError(Throwable t) {
                        f.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {}
                });
        return f;
    }
}
