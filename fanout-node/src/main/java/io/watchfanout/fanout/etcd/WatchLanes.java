package io.watchfanout.fanout.etcd;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.watchfanout.fanout.watch.WakeUps;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.LoggerFactory;

/**
 * The threads that run the etcd API's Watch streams: a few lanes, each one thread, each stream on
 * one lane for its life (round robin), so that a stream's state is confined to its lane's thread.
 * The wake-ups of one lane's streams are coalesced into one task, as the HTTP side does per IO
 * thread: when an event matches 1,000 watchers, the feed thread hands each lane one task that pumps
 * all of its woken streams, instead of 1,000 {@code execute} calls on a shared pool, each a queue
 * node and possibly a thread to unpark.
 *
 * <p>The threads are Netty's ({@link DefaultThreadFactory}), so that the transport buffers grpc
 * allocates on them for each response come from a thread cache found without a {@code ThreadLocal}
 * lookup.
 *
 * <p>Thread-safety: thread-safe.
 */
final class WatchLanes {
    private final Lane[] lanes;
    private final AtomicInteger next = new AtomicInteger();

    /**
     * @param name the threads' name prefix
     * @param count the number of lanes, {@code >= 1}
     */
    WatchLanes(String name, int count) {
        DefaultThreadFactory threads = new DefaultThreadFactory(name, true);
        lanes = new Lane[count];
        for (int i = 0; i < count; i++) {
            lanes[i] = new Lane(Executors.newSingleThreadExecutor(threads));
        }
    }

    /** The lane of a new stream. */
    Lane next() {
        return lanes[Math.floorMod(next.getAndIncrement(), lanes.length)];
    }

    /** Stops the threads; queued tasks are dropped. */
    void shutdownNow() {
        for (Lane l : lanes) {
            l.thread.shutdownNow();
        }
    }

    /**
     * One lane: an executor that runs its tasks one at a time in submission order on one thread
     * (the streams' serial executor), and the coalesced wake-ups of its streams.
     */
    static final class Lane implements Executor {
        private final ExecutorService thread;
        private final WakeUps<EtcdWatchStream> wakeUps;

        private Lane(ExecutorService thread) {
            this.thread = thread;
            this.wakeUps = new WakeUps<>(thread, EtcdWatchStream::pumpWoken);
        }

        @Override
        public void execute(Runnable task) {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LoggerFactory.getLogger(WatchLanes.class).error("an etcd API stream task failed", e);
                }
            });
        }

        /** Queues {@code stream}'s pump on the lane; at most one such task is pending. */
        void wake(EtcdWatchStream stream) {
            wakeUps.wake(stream);
        }
    }
}
