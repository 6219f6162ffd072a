package io.watchfanout.testkit;

import io.etcd.jetcd.Client;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes the workload in a loop on its own thread until stopped, riding out etcd outages.
 * Thread-safe.
 */
public final class BackgroundWriter implements AutoCloseable {
    private final Thread thread;
    private final AtomicLong operations = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile boolean running = true;

    /**
     * @param client jetcd client
     * @param prefix key prefix of the writes
     * @param pauseMillis pause between batches of ten operations
     */
    public BackgroundWriter(Client client, String prefix, long pauseMillis) {
        EtcdWorkload workload = new EtcdWorkload(client, prefix, 1234, 200);
        thread = new Thread(
                () -> {
                    while (running) {
                        try {
                            workload.run(10);
                            operations.addAndGet(10);
                            Thread.sleep(pauseMillis);
                        } catch (InterruptedException e) {
                            return;
                        } catch (Exception e) {
                            failures.incrementAndGet();
                            try {
                                Thread.sleep(200);
                            } catch (InterruptedException ie) {
                                return;
                            }
                        }
                    }
                },
                "background-writer");
        thread.start();
    }

    @Override
    public void close() {
        stop();
    }

    /** Operations written so far. */
    public long operations() {
        return operations.get();
    }

    /** Batches that failed (etcd down). */
    public long failures() {
        return failures.get();
    }

    /** Stops writing and waits for the thread; idempotent. */
    public void stop() {
        running = false;
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
