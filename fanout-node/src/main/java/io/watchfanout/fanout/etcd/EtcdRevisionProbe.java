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
 * as kube-apiserver's consistent reads from its watch cache do (KEP-2340). The probe is the node's
 * own call: it carries the node's {@link EtcdCredentials}, and is retried once, with a new token,
 * when etcd says the token is invalid. Thread-safe.
 */
public final class EtcdRevisionProbe implements CurrentRevision {
    private static final RangeRequest PROBE = RangeRequest.newBuilder()
            .setKey(ByteString.copyFrom(new byte[] {0}))
            .setCountOnly(true)
            .build();

    private final Channel etcd;
    private final EtcdCredentials credentials;
    private final Duration timeout;
    /** Where etcd's cluster id and raft term are learned from each answer, or null. */
    private final EtcdHeaders headers;

    /**
     * @param etcd the node's channel to etcd
     * @param credentials the node's etcd user, or {@link EtcdCredentials#none()}
     * @param timeout how long one probe may take
     */
    public EtcdRevisionProbe(Channel etcd, EtcdCredentials credentials, Duration timeout) {
        this(etcd, credentials, timeout, null);
    }

    /** As above, each answer's header also teaching {@code headers} etcd's cluster id and raft term. */
    EtcdRevisionProbe(Channel etcd, EtcdCredentials credentials, Duration timeout, EtcdHeaders headers) {
        this.etcd = etcd;
        this.credentials = credentials;
        this.timeout = timeout;
        this.headers = headers;
    }

    @Override
    public CompletableFuture<Long> current() {
        CompletableFuture<Long> f = new CompletableFuture<>();
        probe(f, true);
        return f;
    }

    private void probe(CompletableFuture<Long> f, boolean mayRenew) {
        ClientCalls.asyncUnaryCall(
                etcd.newCall(
                        KVGrpc.getRangeMethod(),
                        CallOptions.DEFAULT
                                .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                                .withCallCredentials(credentials)),
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
                        if (mayRenew && credentials.renewAfter(t)) {
                            probe(f, false);
                        } else {
                            f.completeExceptionally(t);
                        }
                    }

                    @Override
                    public void onCompleted() {}
                });
    }
}
