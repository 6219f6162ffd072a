package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.Encoding;

/**
 * What the node's watch core is at, read without its lock: the revisions, the cache and history
 * window sizes and the watcher counts that metrics, headers and status pages show. The feed
 * thread publishes the values after each revision; readers see a recent one.
 *
 * <p>Thread-safety: volatile fields written by the feed thread; any thread reads.
 */
public final class NodeStatus {
    private final Dispatcher dispatcher;
    private final Watchers watchers;

    private volatile long revision;
    private volatile long revisionAdvancedNanos = System.nanoTime();
    private volatile long dispatchedRevision;
    private volatile long historyStartRevision;
    private volatile long oldestHistoryRevision;
    private volatile int historySize;
    private volatile int keyCount;
    /** The revision of the last resync applied, 0 for none: no history reaches across it. */
    private volatile long resyncRevision;

    NodeStatus(Dispatcher dispatcher, Watchers watchers) {
        this.dispatcher = dispatcher;
        this.watchers = watchers;
    }

    /** Under the dispatcher's lock, after the cache changed. */
    void publishLocked(WatchCache cache) {
        long r = cache.revision();
        if (r != revision) {
            revisionAdvancedNanos = System.nanoTime();
        }
        revision = r;
        historyStartRevision = cache.historyStartRevision();
        oldestHistoryRevision = cache.oldestHistoryRevision();
        historySize = cache.historySize();
        keyCount = cache.keyCount();
    }

    void dispatched(long rev) {
        dispatchedRevision = rev;
    }

    void resynced(long rev) {
        resyncRevision = Math.max(resyncRevision, rev);
    }

    /** The cache's revision: the newest revision the node is consistent to. */
    public long revision() {
        return revision;
    }

    /**
     * Seconds since the cache's revision last advanced (by an event or a progress record). etcd's
     * revision moves with every write anywhere in etcd, and the ingester turns writes outside the
     * watched range into progress records, so on a cluster with steady writes (a Kubernetes control
     * plane renews leases every few seconds) this stays near the interval between writes; growing
     * well past it, the ingester or etcd has stopped feeding this node, which keeps serving the
     * revision it has (consistent, no longer current, as a Kubernetes watch cache cut off from
     * etcd). On an idle etcd it grows as well: nothing tells a quiet etcd from a stopped feed.
     */
    public double revisionAgeSeconds() {
        return (System.nanoTime() - revisionAdvancedNanos) / 1e9;
    }

    /** The last revision whose dispatch to live watchers is complete. */
    public long dispatchedRevision() {
        return dispatchedRevision;
    }

    /** The first revision after which the history window holds every event. */
    public long historyStartRevision() {
        return historyStartRevision;
    }

    /** The revision of the newest resync applied, 0 for none (a front end that keeps its own view of the objects rebuilds it then). */
    public long resyncRevision() {
        return resyncRevision;
    }

    /** The oldest revision in the history window (0 when empty). */
    public long oldestHistoryRevision() {
        return oldestHistoryRevision;
    }

    /** Events in the history window. */
    public int historySize() {
        return historySize;
    }

    /** Keys in the cache. */
    public int keyCount() {
        return keyCount;
    }

    /** Open watchers. */
    public int watcherCount() {
        return watchers.count();
    }

    /** Open watchers by encoding. */
    public long watcherCount(Encoding encoding) {
        return watchers.count(encoding);
    }

    /**
     * Frames waiting in watchers' queues, summed over the open watchers (each queue is bounded by
     * the watcher queue size plus one revision, whatever a watcher's backlog).
     */
    public long queuedFrames() {
        return watchers.queuedFrames();
    }

    /** Live watchers in the index (takes the dispatcher's lock briefly). */
    public int liveWatcherCount() {
        return dispatcher.liveWatcherCount();
    }

    /** Watchers visited by dispatch so far (matches handed out by the index). */
    public long watcherVisits() {
        return dispatcher.watcherVisits();
    }

    /** Watchers visited through index values (a subset of {@link #watcherVisits()}), read under the core's lock. */
    public long valueIndexVisits() {
        return dispatcher.valueIndexVisits();
    }

    /** Interval-tree nodes examined by dispatch so far. */
    long indexNodesExamined() {
        return dispatcher.indexNodesExamined();
    }
}
