package io.watchfanout.fanout.watch;

import io.prometheus.client.Histogram;
import io.watchfanout.fanout.frame.Encoding;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the dispatch and of the watchers, read by the metrics endpoint and by tests.
 * Thread-safe (LongAdders).
 */
public final class WatchStats {
    final LongAdder eventsDispatched = new LongAdder();
    final LongAdder[] framesDelivered = adders(Encoding.MAX);
    final LongAdder bookmarksSent = new LongAdder();
    final LongAdder parked = new LongAdder();
    final LongAdder unparked = new LongAdder();
    final LongAdder endedExpired = new LongAdder();
    final LongAdder[] bytesSent = adders(Encoding.MAX);
    final LongAdder resyncs = new LongAdder();
    final LongAdder endedByResync = new LongAdder();
    final LongAdder closedStalled = new LongAdder();
    final LongAdder catchUpFromWindow = new LongAdder();
    final LongAdder catchUpFromOlder = new LongAdder();
    final LongAdder resumedFromOlder = new LongAdder();
    /**
     * Seconds from an event's arrival from etcd at the ingester (its record timestamp) to a
     * stage of the node; the ingester observes {@code appended} in the same family.
     */
    private final Histogram eventLatency = Histogram.build(
                    "watchfanout_event_latency_seconds",
                    "Seconds from an event's arrival from etcd at the ingester (the record timestamp) to a stage: applied (in "
                            + "this node's cache, queued to its live watchers; once per revision), written (its last live revision "
                            + "handed to a watcher's socket; once per write of each watcher).")
            .labelNames("stage")
            .buckets(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
            // Observed per write of each watcher: no trace to link, and the sampler's check per
            // observation cost the etcd API's lanes 4 % of their time (docs/BENCHMARKS.md).
            .withoutExemplars()
            .create();

    final Histogram.Child applied = eventLatency.labels("applied");
    final Histogram.Child written = eventLatency.labels("written");

    /** The {@code watchfanout_event_latency_seconds} family, for the metrics registry. */
    public Histogram eventLatency() {
        return eventLatency;
    }

    final LongAdder[] closed = adders(CloseReason.values().length);

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** Events handed to catching-up watchers from the history window. */
    public long catchUpFromWindow() {
        return catchUpFromWindow.sum();
    }

    /** Events handed to catching-up watchers from older history (the events topic). */
    public long catchUpFromOlder() {
        return catchUpFromOlder.sum();
    }

    /**
     * Watches accepted from a revision older than the history window, served from older history:
     * without it each would have been a 410 and a relist (relists avoided).
     */
    public long resumedFromOlder() {
        return resumedFromOlder.sum();
    }

    /** Events applied by the feed and offered to their matching watchers. */
    public long eventsDispatched() {
        return eventsDispatched.sum();
    }

    /** Frames of this encoding handed to watchers' transports (events, bookmarks, errors). */
    public long framesDelivered(Encoding encoding) {
        return framesDelivered[encoding.id()].sum();
    }

    /** BOOKMARK frames queued to watchers. */
    public long bookmarksSent() {
        return bookmarksSent.sum();
    }

    /** Times a live watcher overflowed its queue and was parked. */
    public long parked() {
        return parked.sum();
    }

    /** Times a parked watcher caught up and rejoined live dispatch. */
    public long unparked() {
        return unparked.sum();
    }

    /** Watchers ended with 410 Expired because they fell behind the history window. */
    public long endedExpired() {
        return endedExpired.sum();
    }

    /** Resync records applied (each ends every open stream with 410 Expired). */
    public long resyncs() {
        return resyncs.sum();
    }

    /** Watch streams ended with 410 Expired by a resync. */
    public long endedByResync() {
        return endedByResync.sum();
    }

    /**
     * Connections closed because the stream had ended but its client did not take the last
     * frames within the stalled-close bound (counted by the transport).
     */
    public long closedStalled() {
        return closedStalled.sum();
    }

    /** Counts a connection closed by the stalled-close bound. */
    public void addClosedStalled() {
        closedStalled.increment();
    }

    /**
     * Watch streams whose connection was closed before the stream ended, for {@code reason}
     * (counted by the transport, once per stream); each removed its watcher.
     */
    public long closed(CloseReason reason) {
        return closed[reason.ordinal()].sum();
    }

    /** Counts a watch stream whose connection was closed for {@code reason}. */
    public void addClosed(CloseReason reason) {
        closed[reason.ordinal()].increment();
    }

    /** Bytes written to watch streams of this encoding (counted by the transport). */
    public long bytesSent(Encoding encoding) {
        return bytesSent[encoding.id()].sum();
    }

    /** Adds bytes written to a watch stream of {@code encoding}. */
    public void addBytesSent(Encoding encoding, long bytes) {
        bytesSent[encoding.id()].add(bytes);
    }
}
