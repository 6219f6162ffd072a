package io.watchfanout.fanout.kafka;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The first {@code delete.retention.ms} lookup of a read of the state topic, made on a thread of
 * its own while the read starts: making the admin client and asking take about a second of CPU and
 * some round trips, which the read need not wait for, since its budget is counted from its first
 * fetch whatever the answer ({@link io.watchfanout.schema.StateScan#retentionNow} keeps the
 * shortest setting seen). The lookup made here serves the read's last question too.
 *
 * <p>Thread-safe: its futures are completed by its own thread and read by the feed thread.
 */
final class EarlyRetention implements AutoCloseable {
    private final ExecutorService thread;
    private final CompletableFuture<DeleteRetentionLookup> lookup;
    private final CompletableFuture<Duration> first;

    /** Starts making the lookup and asking once. */
    EarlyRetention(Supplier<DeleteRetentionLookup> make, String nodeId) {
        thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "watchfanout-retention-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        lookup = CompletableFuture.supplyAsync(make, thread);
        first = lookup.thenApplyAsync(DeleteRetentionLookup::get, thread);
    }

    /** The first answer if it has come, else null (not yet, or the question failed). */
    Duration firstIfKnown() {
        return first.isDone() && !first.isCompletedExceptionally() ? first.join() : null;
    }

    /** The first answer, waiting for it; null when the question failed (the caller asks again). */
    Duration first() {
        try {
            return first.join();
        } catch (CompletionException e) {
            return null;
        }
    }

    /** The lookup made early, or one made now when that failed. */
    DeleteRetentionLookup lookup(Supplier<DeleteRetentionLookup> make) {
        try {
            return lookup.join();
        } catch (CompletionException e) {
            DeleteRetentionLookup again = make.get();
            lookup.obtrudeValue(again);
            return again;
        }
    }

    /** Closes the lookup (once made) and ends the thread. */
    @Override
    public void close() {
        lookup.whenComplete((l, e) -> {
            if (l != null) {
                l.close();
            }
        });
        thread.shutdown();
    }
}
