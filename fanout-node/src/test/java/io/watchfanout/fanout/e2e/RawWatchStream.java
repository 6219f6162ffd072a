package io.watchfanout.fanout.e2e;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.watchfanout.common.KeyRange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** One raw {@code etcdserverpb.Watch} stream, as a client library would open it: requests out, every response kept. */
final class RawWatchStream implements AutoCloseable {
    private final LinkedBlockingQueue<WatchResponse> inbox = new LinkedBlockingQueue<>();
    final List<WatchResponse> received = new ArrayList<>();
    private final StreamObserver<WatchRequest> requests;
    private volatile Throwable error;

    RawWatchStream(ManagedChannel channel) {
        requests = WatchGrpc.newStub(channel).watch(new StreamObserver<>() {
            @Override
            public void onNext(WatchResponse r) {
                inbox.add(r);
            }

            @Override
            public void onError(Throwable t) {
                error = t;
            }

            @Override
            public void onCompleted() {}
        });
    }

    void send(WatchRequest r) {
        requests.onNext(r);
    }

    /** Waits for the next response that matches, keeping every response received meanwhile. */
    WatchResponse await(Predicate<WatchResponse> p, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (WatchResponse r : received) {
            if (p.test(r)) {
                return r;
            }
        }
        while (true) {
            long left = deadline - System.nanoTime();
            WatchResponse r = left <= 0 ? null : inbox.poll(left, TimeUnit.NANOSECONDS);
            if (r == null) {
                throw new AssertionError(
                        "no matching response within " + timeout + " (error " + error + "); got " + received);
            }
            received.add(r);
            if (p.test(r)) {
                return r;
            }
        }
    }

    /** Takes every response that arrives within {@code quiet} of the previous one. */
    void drain(Duration quiet) throws InterruptedException {
        WatchResponse r;
        while ((r = inbox.poll(quiet.toMillis(), TimeUnit.MILLISECONDS)) != null) {
            received.add(r);
        }
    }

    /** Every event received so far, one line each, for comparing two streams. */
    List<String> eventLines() {
        List<String> out = new ArrayList<>();
        received.forEach(r ->
                r.getEventsList().forEach(e -> out.add(e.toString().replace('\n', ' '))));
        return out;
    }

    /**
     * The same watch of the prefix {@code keys} from {@code startRevision} (with prev_kv), on
     * etcd and on a node, each read until the event at {@code last} (the node's also until it
     * cancels): their event lines, etcd's first.
     */
    static List<List<String>> onEtcdAndNode(
            ManagedChannel etcd, ManagedChannel node, String keys, long startRevision, long last, Duration wait)
            throws InterruptedException {
        try (RawWatchStream onEtcd = new RawWatchStream(etcd);
                RawWatchStream onNode = new RawWatchStream(node)) {
            ByteString prefix = ByteString.copyFromUtf8(keys);
            WatchRequest req = WatchRequest.newBuilder()
                    .setCreateRequest(WatchCreateRequest.newBuilder()
                            .setKey(prefix)
                            .setRangeEnd(KeyRange.prefixEnd(prefix))
                            .setStartRevision(startRevision)
                            .setPrevKv(true))
                    .build();
            onEtcd.send(req);
            onNode.send(req);
            onEtcd.await(r -> r.getEventsList().stream().anyMatch(e -> e.getKv().getModRevision() == last), wait);
            onNode.await(
                    r -> r.getEventsList().stream().anyMatch(e -> e.getKv().getModRevision() == last)
                            || r.getCanceled(),
                    wait);
            return List.of(onEtcd.eventLines(), onNode.eventLines());
        }
    }

    Throwable error() {
        return error;
    }

    @Override
    public void close() {
        try {
            requests.onError(new RuntimeException("test done"));
        } catch (RuntimeException ignored) {
            // already closed
        }
    }
}
