package io.watchfanout.fanout.etcd;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared pool: the thread of one etcd API
 * stream, so that its state needs no lock and its responses go out in order. Thread-safe.
 */
final class SerialExecutor implements Executor {
    private final Executor pool;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean running = new AtomicBoolean();

    SerialExecutor(Executor pool) {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        schedule();
    }

    private void schedule() {
        if (running.compareAndSet(false, true)) {
            pool.execute(this::drain);
        }
    }

    private void drain() {
        try {
            Runnable t;
            // A bounded batch, so that one busy stream does not hold a pool thread for ever.
            for (int i = 0; i < 64 && (t = tasks.poll()) != null; i++) {
                try {
                    t.run();
                } catch (RuntimeException e) {
                    LoggerFactory.getLogger(SerialExecutor.class).error("an etcd API stream task failed", e);
                }
            }
        } finally {
            running.set(false);
            if (!tasks.isEmpty()) {
                schedule();
            }
        }
    }
}
