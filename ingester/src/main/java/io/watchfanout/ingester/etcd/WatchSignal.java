package io.watchfanout.ingester.etcd;

/**
 * What the etcd watch hands to the publisher thread: a batch of events or progress, a
 * failure of the watch, or an overflow of the hand-off queue. Immutable.
 */
public sealed interface WatchSignal {

    /** The watch generation (see {@link EtcdWatchFeed#watchFrom}) that produced the signal. */
    long generation();

    /** A watch response. */
    record Batch(long generation, WatchBatch batch) implements WatchSignal {}

    /**
     * The watch ended: an error (the feed closed the watch so jetcd does not resume it on its
     * own), a completion, or a compaction of the requested start revision.
     *
     * @param compactRevision etcd's compaction revision when the start revision was
     *     compacted away, else 0
     */
    record Failed(long generation, Throwable cause, long compactRevision) implements WatchSignal {}

    /** The hand-off queue filled up (Kafka slow or down); the feed closed the watch. */
    record Overflow(long generation, long queuedBytes) implements WatchSignal {}
}
