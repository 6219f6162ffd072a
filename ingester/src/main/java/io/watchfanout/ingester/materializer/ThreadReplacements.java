package io.watchfanout.ingester.materializer;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.function.LongSupplier;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TransactionAbortedException;

/**
 * Decides whether the state materializer's failed stream thread is replaced in place or the
 * materializer stops (and with it the ingester, for its supervisor to start again).
 *
 * <p>A network cut between the ingester and a broker can leave the exactly-once producer's
 * transaction in a state that only a new producer gets past: the commit after the cut fails
 * with {@link InvalidTxnStateException}, an expired epoch or an aborted transaction, or a
 * retriable error outlives its retries. Kafka Streams replaces such a thread with a new one and a
 * new producer ({@code REPLACE_THREAD}), which aborts the open transaction and resumes from the
 * last committed offset: nothing is lost or written twice, and the ingester keeps publishing
 * instead of handing over leadership. Anything else (a record that cannot be decoded, a bug)
 * stops the materializer, as does a fourth transient failure within {@link #WINDOW}, so that a
 * failure that repeats is never hidden behind replacements.
 *
 * <p>Thread-safety: {@link #replace} is called by Kafka Streams' failing threads; synchronized.
 */
final class ThreadReplacements {
    /** Transient failures replaced within {@link #WINDOW} before the materializer stops. */
    static final int MAX_REPLACEMENTS = 3;
    /** The window over which replacements are counted. */
    static final Duration WINDOW = Duration.ofMinutes(10);

    private final LongSupplier nanoTime;
    /** Guarded by this: when the recent replacements happened (nanoTime), oldest first. */
    private final ArrayDeque<Long> recent = new ArrayDeque<>();

    /** @param nanoTime the clock, {@link System#nanoTime} in production */
    ThreadReplacements(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /**
     * True when the thread that failed with {@code failure} is to be replaced, false when the
     * materializer is to stop.
     */
    synchronized boolean replace(Throwable failure) {
        if (!transientFailure(failure)) {
            return false;
        }
        long now = nanoTime.getAsLong();
        while (!recent.isEmpty() && now - recent.peekFirst() > WINDOW.toNanos()) {
            recent.pollFirst();
        }
        if (recent.size() >= MAX_REPLACEMENTS) {
            return false;
        }
        recent.addLast(now);
        return true;
    }

    /** A transaction or connection failure that a new producer gets past: not bad data, not a bug. */
    static boolean transientFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SerializationException) {
                return false;
            }
            if (t instanceof InvalidTxnStateException
                    || t instanceof InvalidProducerEpochException
                    || t instanceof TransactionAbortedException
                    || t instanceof RetriableException) {
                return true;
            }
        }
        return false;
    }
}
