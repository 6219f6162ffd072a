package io.watchfanout.fanout.watch;

import io.watchfanout.common.KeyRange;
import io.watchfanout.schema.DigestVerifier;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import java.util.List;

/**
 * The write side of the watch cache: what the rebuild from Kafka (or a test's in-memory
 * source) feeds it. Every method is called from one feed thread, in topic order.
 */
public interface CacheFeed {
    /**
     * The state topic's snapshot (rebuild, before {@link #startAt}): every live key once,
     * sorted by {@link KeyRange#KEY_ORDER}, so that the ordered map is built in linear time.
     *
     * @throws IllegalArgumentException if the keys are not strictly ascending
     */
    void loadState(List<KeyValue> sortedByKey);

    /**
     * As {@link #loadState(List)}, with the arena that the values were stored into while the state
     * topic was read: the cache keeps them there (no copy) and takes the arena over; the caller must
     * not touch it again.
     *
     * @throws IllegalArgumentException if the keys are not strictly ascending
     */
    default void loadState(List<KeyValue> sortedByKey, ValueArena values) {
        loadState(sortedByKey);
    }

    /** The loaded snapshot is the state at {@code revision}; events follow after it. */
    void startAt(long revision);

    /**
     * As {@link #startAt(long)}, with the revisions just before the snapshot's (already part of the
     * state) for the history window, so that watches from before the rebuild can be resumed.
     *
     * @param history complete revisions, ascending, each {@code <= revision}, with no gap after the
     *     first (the events topic's records before the checkpoint)
     */
    default void startAt(long revision, List<PreloadedRevision> history) {
        startAt(revision);
    }

    /**
     * The events of one complete revision, index {@code 0..count-1}.
     *
     * @param recordTimestampMillis when the ingester received the revision from etcd (its
     *     records' Kafka timestamp, epoch milliseconds), 0 when unknown: the start of
     *     {@code watchfanout_event_latency_seconds}
     */
    void applyRevision(List<Event> events, long recordTimestampMillis);

    /** A progress record: the range is complete up to {@code revision}. */
    void applyProgress(long revision);

    /**
     * A resync at {@code revision} with all its entries; history before it is gone, so the node
     * ends every open watch stream with 410 Expired (clients list again), logs and counts it.
     */
    void applyResync(long revision, List<Event> entries);

    /** Periodic housekeeping on the feed thread (history expiry by age). */
    void tick();

    /** The feed has caught up with the end of the events topic: the node may serve. */
    void markReady();

    /**
     * The feed's freshness changed: {@code problem} says why the newest record from the
     * ingester is too old (readiness fails, the node goes on serving what it has), or is null
     * once records come again.
     */
    void feedStale(String problem);

    /**
     * The rebuild cannot finish yet: it dropped what it had read of the state topic and reads it
     * again, because the read took too long to be trusted (a tombstone may have vanished before it
     * was read), or the events topic holds no record yet (the ingester has never written to it).
     * {@code problem} says so, as a clause after "it", for {@code /readyz} and the 503 of a request,
     * until the node is ready.
     */
    default void rebuildDelayed(String problem) {}

    /**
     * Compares the cache with etcd's digest ({@code Progress.digest}), taken back to
     * {@code digest.revision} by the changes of the revisions after it. The cache's hash is kept
     * per change of an entry from what the cache held, so an equal digest proves the cache itself.
     * Called on the feed thread between revisions.
     */
    default DigestVerifier.Verdict checkDigest(StateDigest digest) {
        return new DigestVerifier.Verdict(digest, DigestVerifier.Outcome.TOO_OLD, null);
    }

    /**
     * Where the cache, taken back to {@code digest.revision} (through the history window), differs
     * from etcd's digest: the first differing sub-range of keys, or why that cannot be said. Scans
     * the cache under its lock: for after a digest was found different, not per digest.
     */
    default String whereCacheDiffers(StateDigest digest) {
        return "where is not known";
    }

    /** The feed found bad data and stopped for good: the node must stop serving (docs/ARCHITECTURE.md, invariant 8). */
    void fail(String reason);
}
