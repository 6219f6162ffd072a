package io.watchfanout.fanout.watch;

import io.watchfanout.schema.v1.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place that decides 410 Expired and says why: how old a watch may start (the history
 * window, or with an {@link OlderHistory} the events topic's floor, never across the newest
 * resync) and how old a list may read (the window only), and the messages that tell a client to
 * list again. etcd answers the same cases with {@code ErrCompacted} ("required revision has been
 * compacted"), kube-apiserver with 410 Gone, reason {@code Expired}, "too old resource version".
 *
 * <p>Thread-safety: reads volatile state; any thread.
 */
final class Expiry {
    private static final Logger LOG = LoggerFactory.getLogger(Expiry.class);

    private final NodeStatus status;
    private final WatchStats stats;
    private final String nodeId;
    /** Where watches from before the window are served from, or null (they get 410). */
    private volatile OlderHistory older;

    Expiry(NodeStatus status, WatchStats stats, String nodeId) {
        this.status = status;
        this.stats = stats;
        this.nodeId = nodeId;
    }

    void useOlderHistory(OlderHistory olderHistory) {
        this.older = olderHistory;
    }

    OlderHistory older() {
        return older;
    }

    /**
     * The oldest cursor a watch may start from now: the window's start, or with an
     * {@link OlderHistory} the older of it and that history's floor (never across the latest
     * resync; while the floor is not known yet, the latest resync). A watch from before it gets 410;
     * so does a parked watcher that falls behind it.
     */
    long servableFromRevision() {
        long windowStart = status.historyStartRevision();
        OlderHistory o = older;
        if (o == null) {
            return windowStart;
        }
        long floor = o.floorRevision();
        if (floor == Long.MAX_VALUE) {
            // Not checked yet (a node that just started, Kafka slow to answer): the read that serves the
            // watch checks the topic's first record itself and ends it with 410 if that is too late. A
            // 410 up front would send a client that resumes inside retention to list again.
            floor = 0;
        }
        return Math.min(windowStart, Math.max(floor, status.resyncRevision()));
    }

    /** True when a watcher at {@code cursor} can no longer be served. */
    boolean isBehind(long cursor) {
        return cursor < servableFromRevision();
    }

    /**
     * @throws HistoryExpiredException if a watch cannot start after {@code from}
     */
    void checkWatchFrom(long from) throws HistoryExpiredException {
        long servable = servableFromRevision();
        if (from < servable) {
            throw tooOld(from, servable);
        }
    }

    /** The 410 of a read or watch from {@code requested}, older than {@code oldestServable}. */
    static HistoryExpiredException tooOld(long requested, long oldestServable) {
        return new HistoryExpiredException(
                "too old resource version: " + requested + " (the oldest this node can serve from is " + oldestServable
                        + "; list again)",
                requested,
                oldestServable);
    }

    /** The ERROR frame's status of a watcher that fell behind what this node can serve. */
    Status fellBehind(Watcher w) {
        return expired(
                w,
                "too old resource version: " + w.cursor() + " (the oldest this node can serve from is "
                        + servableFromRevision() + "; the watcher fell behind it)");
    }

    /** The ERROR frame's status of a watcher ended for {@code why}, logged and counted. */
    Status expired(Watcher w, String why) {
        stats.endedExpired.increment();
        LOG.info("[node {}] {}: 410 Expired: {}", nodeId, w, why);
        return Statuses.expired(why + "; list again");
    }

    /** The ERROR frame's status of the watchers a resync at {@code resyncRevision} ends. */
    static Status resynced(long resyncRevision) {
        return Statuses.expired(
                "the node resynchronised at revision " + resyncRevision + " (etcd history was compacted); list again");
    }
}
