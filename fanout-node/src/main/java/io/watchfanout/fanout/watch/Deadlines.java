package io.watchfanout.fanout.watch;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The core's timer for the deadlines of revision waits: one daemon thread, started on first use
 * and stopped with the core. Its tasks only cancel a waiter and hand the outcome to the front
 * end's executor: nothing blocks on it.
 *
 * <p>Thread-safe.
 */
final class Deadlines implements AutoCloseable {
    private final String nodeId;
    private ScheduledThreadPoolExecutor timer;

    Deadlines(String nodeId) {
        this.nodeId = nodeId;
    }

    synchronized ScheduledFuture<?> after(long millis, Runnable task) {
        if (timer == null) {
            timer = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "watchfanout-deadlines-" + nodeId);
                t.setDaemon(true);
                return t;
            });
            timer.setRemoveOnCancelPolicy(true);
        }
        return timer.schedule(task, millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
