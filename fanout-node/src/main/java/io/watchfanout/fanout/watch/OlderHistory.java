package io.watchfanout.fanout.watch;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The events older than the history window, read from where they are kept for longer (the
 * events topic): a watch or a parked watcher whose cursor is before the window is served from
 * here until its cursor reaches the window, then joins it (KEP-1904's goal: a resume anywhere in
 * retention, on any node, without a relist).
 *
 * <p>Readers of one span share it: {@link #open} attaches a cursor to a read already under way
 * that still holds the cursor's revision, so that their events are fetched and decoded once, and
 * each event's frames are built once per encoding for all of them.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public interface OlderHistory {
    /**
     * The oldest cursor this history serves as far as the node last checked: events after any
     * revision {@code >=} it are held. {@link Long#MAX_VALUE} while unknown. A cursor that passes
     * this check may still find, when read, that retention has moved on ({@link Step.Kind#EXPIRED}).
     */
    long floorRevision();

    /**
     * Whether {@link #open} would accept a cursor at {@code afterRevision} now (a read to join,
     * or room for a new one); for answering 429 before a stream starts.
     */
    boolean canOpen(long afterRevision);

    /**
     * Opens a cursor that reads the events after {@code afterRevision}, joining a read of the same
     * span when one holds it, else starting one.
     *
     * @throws TooManyReadsException when a new read is needed and the node runs its maximum
     */
    Cursor open(long afterRevision) throws TooManyReadsException;

    /**
     * The cursor of a watch from {@code time} ({@code sinceTime}): the revision before the first
     * revision recorded at or after it, or -1 when none is that recent (watch from now).
     *
     * @return a future that fails with {@link io.watchfanout.fanout.watch.HistoryExpiredException}
     *     for a time before the oldest retained event
     */
    CompletableFuture<Long> revisionAt(Instant time);

    /** One watcher's position in a read; used by one thread at a time. */
    interface Cursor {
        /**
         * The next events after the cursor that match {@code range}, whole revisions only; or
         * {@link Step.Kind#WAIT} after arranging for {@code wake} to run once more is read.
         *
         * @param maxEvents stop after a revision that brings the matches to this many, {@code >= 1}
         * @param maxScan stop after a revision that brings the events looked at to this many
         */
        Step next(KeyRange range, int maxEvents, int maxScan, Runnable wake);

        /** Detaches from the read (idempotent): its events may then be dropped. */
        void close();
    }

    /**
     * One step of a cursor.
     *
     * @param kind what happened
     * @param events with {@link Kind#EVENTS}: the matching events, in revision order
     * @param cursor with {@link Kind#EVENTS} and {@link Kind#END}: the revision the watcher holds
     *     every matching event up to after this step
     * @param message with {@link Kind#EXPIRED} and {@link Kind#FAILED}: why, for the client
     */
    record Step(Kind kind, List<CachedEvent> events, long cursor, String message) {
        /** Kinds of step. */
        public enum Kind {
            /** Events (possibly none, when only revisions outside the range were passed). */
            EVENTS,
            /** Nothing read yet beyond the cursor; {@code wake} runs when there is. */
            WAIT,
            /** The read is over at {@code cursor}: continue from the window. */
            END,
            /** The events after the cursor are gone (retention, or a resynchronisation): 410. */
            EXPIRED,
            /** The read failed (Kafka); the client should retry, elsewhere or later: 503. */
            FAILED
        }

        /** A step with events. */
        public static Step events(List<CachedEvent> events, long cursor) {
            return new Step(Kind.EVENTS, events, cursor, null);
        }

        /** Nothing yet. */
        public static Step waiting() {
            return new Step(Kind.WAIT, List.of(), -1, null);
        }

        /** The read ended at {@code cursor}. */
        public static Step end(long cursor) {
            return new Step(Kind.END, List.of(), cursor, null);
        }

        /** The history after the cursor is gone. */
        public static Step expired(String message) {
            return new Step(Kind.EXPIRED, List.of(), -1, message);
        }

        /** The read failed. */
        public static Step failed(String message) {
            return new Step(Kind.FAILED, List.of(), -1, message);
        }
    }
}
