package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.AttributeExtractor;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.ObjectAttributes;
import io.watchfanout.schema.DigestRanges;
import io.watchfanout.schema.DigestVerifier;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write side of the core (Kubernetes' {@code Cacher.dispatchEvents}): the one feed thread
 * applies each revision to the {@link WatchCache} and hands it to the live watchers it matches,
 * parking those that overflow; it also applies progress, resyncs and failures, and completes
 * the revision waiters. It owns the lock that guards the cache, the {@link io.watchfanout.common.RangeIndex} of live
 * watchers and the waiters, and every phase change of a watcher that happens under it.
 *
 * <p>Dispatch, as ZooKeeper's {@code triggerWatch}: under the lock the feed thread applies a
 * revision and picks the watchers whose range holds one of its keys (cost in proportion to the
 * matches); after releasing it, it offers each of them its frames, built once per encoding.
 * Nothing writes to a socket, calls a transport other than its non-blocking wake-up, or blocks
 * under the lock. A watcher that overflows is parked and taken out of the index; it catches up
 * from history on its transport's thread ({@link CatchUp}) and rejoins under the lock once its
 * cursor equals the cache's revision, so the handoff loses and repeats nothing.
 *
 * <p>Thread-safety: the feed methods run on one thread; the rest on any thread, under the lock
 * (lock order: this lock, then a watcher's monitor).
 */
final class Dispatcher implements CacheFeed {
    private static final Logger LOG = LoggerFactory.getLogger(Dispatcher.class);
    /** The kinds of an event's frame a watcher may get: EVENT, ENTERED, LEFT. */
    private static final int EVENT_KINDS = 3;

    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}. */
    private final WatchCache cache;
    /** Guarded by {@link #lock}. */
    private final LiveIndex index = new LiveIndex();
    /** Guarded by {@link #lock}. */
    private final RevisionWaiters waiters = new RevisionWaiters();

    private final Watchers watchers = new Watchers();
    private final NodeStatus status = new NodeStatus(this, watchers);
    private final Readiness readiness = new Readiness();
    private final WatchStats stats = new WatchStats();
    private final Expiry expiry;
    private final FrameEncoder encoder;
    private final CoreSettings settings;

    /** Set before the node serves ({@link #useAttributes}), or null. */
    private volatile AttributeExtractor extractor;
    /** Told of each revision before it is applied ({@link #observeRevisions}), or null. */
    private volatile Consumer<List<Event>> revisionObserver;

    /** Feed thread only: the watchers one event goes to as it happened. */
    private final List<Watcher> touched = new ArrayList<>();
    /** Feed thread only: the watchers whose selector makes the event another kind, and that kind. */
    private final List<Watcher> selected = new ArrayList<>();

    private final List<FrameKind> selectedKinds = new ArrayList<>();
    /** Feed thread only: one event's frames by encoding and kind (EVENT, ENTERED, LEFT), emptied after each. */
    private final ByteBuffer[] shared = new ByteBuffer[Encoding.MAX * EVENT_KINDS];
    /** Feed thread only: the slots of {@link #shared} the current event filled, the first {@link #usedSlotCount}. */
    private final int[] usedSlots = new int[Encoding.MAX * EVENT_KINDS];

    private int usedSlotCount;

    private final List<Watcher> overflowed = new ArrayList<>();

    Dispatcher(CoreSettings settings, FrameEncoder encoder) {
        this.settings = settings;
        this.encoder = encoder;
        this.cache = new WatchCache(settings.historyMaxEvents(), settings.historyMaxAge(), settings.clockMillis());
        this.expiry = new Expiry(status, stats, settings.nodeId());
    }

    // ---- what the other parts of the core share (thread-safe themselves) ---------------

    /** Every open watcher. */
    Watchers watchers() {
        return watchers;
    }

    /** Revisions, sizes and counts, read without the lock. */
    NodeStatus status() {
        return status;
    }

    Readiness readiness() {
        return readiness;
    }

    WatchStats stats() {
        return stats;
    }

    /** Every 410, and the older history. */
    Expiry expiry() {
        return expiry;
    }

    FrameEncoder encoder() {
        return encoder;
    }

    CoreSettings settings() {
        return settings;
    }

    /** Registers the observer of applied revisions (one per core). */
    void observeRevisions(Consumer<List<Event>> observer) {
        if (revisionObserver != null) {
            throw new IllegalStateException("a revision observer is registered already");
        }
        revisionObserver = Objects.requireNonNull(observer, "observer");
    }

    /** The front end's extractor, or null. */
    AttributeExtractor extractor() {
        return extractor;
    }

    /**
     * Registers the extractor (before the node serves; one per core).
     *
     * @throws IllegalStateException if one is registered already
     */
    void useAttributes(AttributeExtractor x) {
        if (extractor != null) {
            throw new IllegalStateException("an attribute extractor is registered already");
        }
        extractor = Objects.requireNonNull(x, "extractor");
    }

    // ---- opening, reads and waits (any thread, under the lock) --------------------------

    /**
     * Opens a watcher under the lock: from the cache's snapshot of its range (initial events),
     * or live at once when it starts at the cache's revision, else catching up from its start
     * revision; registered, so that a resync that follows ends it.
     *
     * @throws HistoryExpiredException if its start revision is older than the history
     * @throws IllegalStateException if its start revision is ahead of the cache
     */
    Watcher open(WatchSpec spec, WatchSink sink) throws HistoryExpiredException {
        lock.lock();
        try {
            long current = cache.revision();
            Watcher w;
            if (spec.sendInitialEvents()) {
                w = new Watcher(
                        spec,
                        sink,
                        settings.queueFrames(),
                        current,
                        cache.snapshot(spec.range()),
                        startBookmark(spec, current));
            } else {
                long rv = spec.resourceVersion();
                long from = rv == 0 ? current : rv;
                if (from < cache.historyStartRevision()) {
                    expiry.checkWatchFrom(from);
                    // (Whether a read of older history can be opened was asked before the lock; if
                    // the window moved on since, the first catch-up step opens one or ends the
                    // stream with 429.)
                    stats.resumedFromOlder.increment();
                }
                if (from > current) {
                    throw new IllegalStateException(
                            "resourceVersion " + from + " is ahead of the cache at " + current + "; await it first");
                }
                w = new Watcher(spec, sink, settings.queueFrames(), from, null, startBookmark(spec, from));
                goLiveLocked(w);
            }
            watchers.add(w);
            return w;
        } finally {
            lock.unlock();
        }
    }

    private ByteBuffer startBookmark(WatchSpec spec, long revision) {
        if (!spec.startBookmark()) {
            return null;
        }
        stats.bookmarksSent.increment();
        return spec.bookmark(encoder, revision);
    }

    /**
     * Adds {@code w} to the revision waiters unless the cache is at its revision already or the
     * node failed.
     *
     * @return false when it is due now (not added: the caller completes it)
     */
    boolean addWaiter(RevisionWaiter w) {
        lock.lock();
        try {
            if (cache.revision() >= w.revision || readiness.failure() != null) {
                return false;
            }
            waiters.addLocked(w);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Forgets a cancelled waiter. */
    void removeWaiter(RevisionWaiter w) {
        lock.lock();
        try {
            waiters.removeLocked(w);
        } finally {
            lock.unlock();
        }
    }

    /** See {@link WatchCore#list(KeyRange, ByteString, long, int, boolean)}. */
    ListPage list(KeyRange range, ByteString from, long atRevision, int limit, boolean countRemaining)
            throws HistoryExpiredException {
        lock.lock();
        try {
            long at = atRevision == 0 ? cache.revision() : atRevision;
            return cache.list(range, from == null ? range.start() : from, at, limit, countRemaining);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public DigestVerifier.Verdict checkDigest(StateDigest digest) {
        // The feed thread is the cache's only writer and the only user of its digest state.
        lock.lock();
        try {
            return cache.checkDigest(digest);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String whereCacheDiffers(StateDigest digest) {
        ListPage atDigest;
        lock.lock();
        try {
            atDigest = cache.list(KeyRange.all(), ByteString.EMPTY, digest.getRevision(), Integer.MAX_VALUE, false);
        } catch (HistoryExpiredException e) {
            return "the history window no longer reaches revision " + digest.getRevision() + " to say where";
        } finally {
            lock.unlock();
        }
        return DigestRanges.firstDifference(digest, atDigest.kvs(), List.of())
                .map(d -> "the cache differs first in " + d)
                .orElse("the cache's key-values at revision " + digest.getRevision()
                        + " equal etcd's range by range: the cache's running hash went wrong");
    }

    /** The current state of {@code range}. */
    List<StateEntry> snapshot(KeyRange range) {
        lock.lock();
        try {
            return cache.snapshot(range);
        } finally {
            lock.unlock();
        }
    }

    /**
     * What one catch-up step of a watcher found under the lock ({@link #nextFromWindow}): it
     * rejoined live dispatch (or is not catching up: nothing to read); events of the window
     * ({@code read}); its cursor is before the window and older history can serve it; or it is
     * before the window and nothing can (410).
     */
    record WindowStep(Kind kind, HistoryRead read) {
        enum Kind {
            LIVE,
            READ,
            OLDER,
            EXPIRED
        }

        static final WindowStep LIVE = new WindowStep(Kind.LIVE, null);
        static final WindowStep OLDER = new WindowStep(Kind.OLDER, null);
        static final WindowStep EXPIRED = new WindowStep(Kind.EXPIRED, null);
    }

    /**
     * One catch-up step's look at the window, under the lock: the watcher rejoins live dispatch
     * when its cursor is the cache's revision, else up to its free capacity of events after its
     * cursor are read (scanning at most {@code maxScan}).
     *
     * @param olderHistory whether older history can serve a cursor before the window
     */
    WindowStep nextFromWindow(Watcher w, boolean olderHistory, int maxScan) {
        lock.lock();
        try {
            long cursor = w.catchUpCursor();
            if (cursor < 0 || goLiveLocked(w)) {
                return WindowStep.LIVE;
            }
            if (cursor < cache.historyStartRevision() && olderHistory) {
                return WindowStep.OLDER;
            }
            return new WindowStep(
                    WindowStep.Kind.READ, cache.readHistory(cursor, w.spec.range(), w.capacity(), maxScan));
        } catch (HistoryExpiredException e) {
            return olderHistory ? WindowStep.OLDER : WindowStep.EXPIRED;
        } finally {
            lock.unlock();
        }
    }

    // ---- CacheFeed (the feed thread) ----------------------------------------------------

    @Override
    public void loadState(List<KeyValue> sortedByKey) {
        loadState(sortedByKey, new ValueArena());
    }

    @Override
    public void loadState(List<KeyValue> sortedByKey, ValueArena values) {
        lock.lock();
        try {
            cache.loadState(sortedByKey, values);
            status.publishLocked(cache);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void startAt(long startRevision) {
        startAt(startRevision, List.of());
    }

    @Override
    public void startAt(long startRevision, List<PreloadedRevision> history) {
        lock.lock();
        try {
            cache.startAt(startRevision, history);
            status.publishLocked(cache);
        } finally {
            lock.unlock();
        }
        status.dispatched(startRevision);
    }

    @Override
    public void applyRevision(List<Event> events, long recordTimestampMillis) {
        List<CachedEvent> applied;
        Map<Watcher, List<Matched>> multi = null;
        List<RevisionWaiter> due;
        long previous;
        AttributeExtractor x = extractor;
        // Only while a watcher reads them (selects or is indexed), and before the lock: the
        // attributes cost a look at each value, which no waiter should wait for. Otherwise each
        // event gets the extractor, for a watcher selecting later (catching up) to ask it then.
        ObjectAttributes[] attributes = x == null || !watchers.anyReadsAttributes() ? null : attributes(events, x);
        Consumer<List<Event>> observer = revisionObserver;
        if (observer != null) {
            observer.accept(events);
        }
        lock.lock();
        try {
            previous = cache.revision();
            applied = cache.applyRevision(events);
            if (attributes != null) {
                for (int i = 0; i < applied.size(); i++) {
                    applied.get(i).attribute(attributes[2 * i], attributes[2 * i + 1]);
                }
            } else if (x != null) {
                for (int i = 0; i < applied.size(); i++) {
                    applied.get(i).attribute(x);
                }
            }
            if (applied.size() == 1) {
                CachedEvent only = applied.get(0);
                index.forEachCandidate(only, w -> {
                    // The common case first: as cheap per watcher as a range match can be.
                    if (w.spec.plain) {
                        touched.add(w);
                        return;
                    }
                    FrameKind kind = w.spec.frameKindFor(only);
                    if (kind == FrameKind.EVENT) {
                        touched.add(w);
                    } else if (kind != null) {
                        selected.add(w);
                        selectedKinds.add(kind);
                    }
                });
            } else {
                Map<Watcher, List<Matched>> byWatcher = new IdentityHashMap<>();
                for (CachedEvent e : applied) {
                    index.forEachCandidate(e, w -> {
                        FrameKind kind = w.spec.frameKindFor(e);
                        if (kind != null) {
                            byWatcher
                                    .computeIfAbsent(w, k -> new ArrayList<>(2))
                                    .add(new Matched(e, kind));
                        }
                    });
                }
                multi = byWatcher;
            }
            status.publishLocked(cache);
            due = waiters.dueLocked(cache.revision());
        } finally {
            lock.unlock();
        }
        long rev = applied.get(0).revision();
        if (multi == null) {
            CachedEvent event = applied.get(0);
            for (int i = 0; i < touched.size(); i++) {
                Watcher w = touched.get(i);
                offer(
                        w,
                        w.offerLive(
                                sharedFrame(event, w, FrameKind.EVENT), null, rev, previous, recordTimestampMillis));
            }
            for (int i = 0; i < selected.size(); i++) {
                Watcher w = selected.get(i);
                offer(
                        w,
                        w.offerLive(
                                sharedFrame(event, w, selectedKinds.get(i)),
                                null,
                                rev,
                                previous,
                                recordTimestampMillis));
            }
            // Only the slots this event filled: one or two encodings of the many registered.
            for (int i = 0; i < usedSlotCount; i++) {
                shared[usedSlots[i]] = null;
            }
            usedSlotCount = 0;
            touched.clear();
            selected.clear();
            selectedKinds.clear();
        } else {
            // A multi-event revision goes to each watcher whole: all its matching events at once.
            // Its last frame for this watcher is the one that may name a resume point (SSE id).
            for (Map.Entry<Watcher, List<Matched>> m : multi.entrySet()) {
                Watcher w = m.getKey();
                List<Matched> matched = m.getValue();
                List<ByteBuffer> frames = new ArrayList<>(matched.size());
                for (int i = 0; i < matched.size(); i++) {
                    Matched one = matched.get(i);
                    frames.add(
                            settings.encodePerWatcher()
                                    ? encoder.event(one.event(), w.encoding(), one.kind())
                                    : one.event().frame(w.encoding(), one.kind(), encoder, i == matched.size() - 1));
                }
                offer(w, w.offerLive(null, frames, rev, previous, recordTimestampMillis));
            }
        }
        if (!overflowed.isEmpty()) {
            lock.lock();
            try {
                for (Watcher w : overflowed) {
                    if (index.contains(w) && w.isParkedLocked()) {
                        index.remove(w);
                    }
                }
            } finally {
                lock.unlock();
            }
            overflowed.clear();
        }
        status.dispatched(rev);
        stats.eventsDispatched.add(applied.size());
        if (readiness.isRebuilt() && recordTimestampMillis > 0) {
            // Once per revision, never per watcher; not while catching up after a rebuild.
            stats.applied.observe(Math.max(0, System.currentTimeMillis() - recordTimestampMillis) / 1000.0);
        }
        RevisionWaiters.run(due);
    }

    /** {@code event}'s frame of {@code kind} in {@code w}'s encoding: encoded once per event, encoding and kind. */
    private ByteBuffer sharedFrame(CachedEvent event, Watcher w, FrameKind kind) {
        Encoding encoding = w.encoding();
        if (settings.encodePerWatcher()) {
            return encoder.event(event, encoding, kind);
        }
        int slot = encoding.id() * EVENT_KINDS + (kind == FrameKind.EVENT ? 0 : kind == FrameKind.ENTERED ? 1 : 2);
        ByteBuffer frame = shared[slot];
        if (frame == null) {
            frame = event.frame(encoding, kind, encoder, true);
            shared[slot] = frame;
            usedSlots[usedSlotCount++] = slot;
        }
        return frame;
    }

    /** The attributes of each event's new and previous object: [2i] and [2i + 1]. */
    private static ObjectAttributes[] attributes(List<Event> events, AttributeExtractor x) {
        ObjectAttributes[] out = new ObjectAttributes[2 * events.size()];
        for (int i = 0; i < events.size(); i++) {
            Event e = events.get(i);
            out[2 * i] = e.getType() == Event.Type.DELETE ? null : x.extract(e.getKv());
            out[2 * i + 1] = e.hasPrevKv() ? x.extract(e.getPrevKv()) : null;
        }
        return out;
    }

    /** One event a watcher gets of a multi-event revision, and as what. */
    private record Matched(CachedEvent event, FrameKind kind) {}

    private void offer(Watcher w, Watcher.Offer result) {
        switch (result) {
            case PARKED -> {
                stats.parked.increment();
                overflowed.add(w);
                w.sink.wakeUp();
            }
            case QUEUED_WAKE -> w.sink.wakeUp();
            default -> {
                // Queued behind frames its transport knows of, or no longer live.
            }
        }
    }

    @Override
    public void applyProgress(long progressRevision) {
        List<RevisionWaiter> due;
        lock.lock();
        try {
            cache.applyProgress(progressRevision);
            status.publishLocked(cache);
            due = waiters.dueLocked(cache.revision());
        } finally {
            lock.unlock();
        }
        status.dispatched(Math.max(status.dispatchedRevision(), progressRevision));
        RevisionWaiters.run(due);
    }

    /**
     * A resync (the ingester lost its place to an etcd compaction and republished the state at
     * {@code resyncRevision}): the cache takes the new state and its history is emptied, and
     * every watch stream open at that moment is ended with an ERROR frame, 410 {@code Expired}.
     * That is Kubernetes' relist signal: the events between a watcher's position and the resync
     * are gone from etcd, so no node can deliver them, and the client must list again and watch
     * from the list's revision. Each resync is logged (WARN, with the number of streams ended)
     * and counted ({@link WatchStats#resyncs()}, {@link WatchStats#endedByResync()}).
     */
    @Override
    public void applyResync(long resyncRevision, List<Event> entries) {
        List<RevisionWaiter> due;
        List<Watcher> predating;
        lock.lock();
        try {
            cache.applyResync(resyncRevision, entries);
            status.resynced(resyncRevision);
            status.publishLocked(cache);
            due = waiters.dueLocked(cache.revision());
            // Watchers register under this lock: the ones seen here opened before the resync.
            predating = watchers.snapshot();
        } finally {
            lock.unlock();
        }
        status.dispatched(Math.max(status.dispatchedRevision(), resyncRevision));
        stats.resyncs.increment();
        int ended = 0;
        for (Watcher w : predating) {
            if (endWithError(w, Expiry.resynced(resyncRevision))) {
                ended++;
            }
        }
        stats.endedByResync.add(ended);
        LOG.warn(
                "[node {}] resync at revision {} with {} entries: history emptied, ended {} watch streams with "
                        + "410 Expired (clients list again)",
                settings.nodeId(),
                resyncRevision,
                entries.size(),
                ended);
        RevisionWaiters.run(due);
    }

    @Override
    public void tick() {
        lock.lock();
        try {
            cache.expireHistory();
            status.publishLocked(cache);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void markReady() {
        readiness.markRebuilt();
    }

    @Override
    public void rebuildDelayed(String problem) {
        readiness.rebuildDelayed(problem);
    }

    @Override
    public void feedStale(String problem) {
        readiness.feedStale(problem);
    }

    @Override
    public void fail(String reason) {
        readiness.fail(reason);
        List<RevisionWaiter> all;
        lock.lock();
        try {
            all = waiters.allLocked();
        } finally {
            lock.unlock();
        }
        for (Watcher w : watchers.all()) {
            endWithError(w, Statuses.notReady("this node stopped serving: " + reason));
        }
        RevisionWaiters.run(all);
    }

    // ---- the index and endings (any thread) --------------------------------------------

    /**
     * Under the lock: a watcher catching up whose cursor reached the cache's revision joins live
     * dispatch.
     *
     * @return true if it is live now
     */
    private boolean goLiveLocked(Watcher w) {
        Watcher.GoLive result = w.goLiveLocked(cache.revision());
        if (result == Watcher.GoLive.NO) {
            return false;
        }
        if (result == Watcher.GoLive.LIVE_AFTER_PARKING) {
            stats.unparked.increment();
        }
        index.add(w);
        return true;
    }

    /** Takes a watcher out of live dispatch (it stays registered until closed). */
    void leaveIndex(Watcher w) {
        lock.lock();
        try {
            index.remove(w);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends a watcher with an ERROR frame carrying {@code status}; queued frames are dropped.
     *
     * @return false if it was already ending or over
     */
    boolean endWithError(Watcher w, Status status) {
        leaveIndex(w);
        if (!w.endWith(encoder.error(status, w.encoding()))) {
            return false;
        }
        w.sink.wakeUp();
        return true;
    }

    /** Ends a watcher that fell behind the history this node can serve with 410 Expired. */
    void expire(Watcher w) {
        endWithError(w, expiry.fellBehind(w));
    }

    /**
     * Ends a watcher normally (timeoutSeconds, node shutdown): it leaves dispatch, gets a final
     * BOOKMARK when bookmarks are allowed, then its transport ends the stream.
     */
    void finish(Watcher w) {
        leaveIndex(w);
        Watcher.Finish result = w.finish(encoder, status.dispatchedRevision());
        if (result != Watcher.Finish.ALREADY_ENDING) {
            if (result == Watcher.Finish.ENDED_WITH_BOOKMARK) {
                stats.bookmarksSent.increment();
            }
            w.sink.wakeUp();
        }
    }

    /** Forgets a watcher whose transport is gone. */
    void close(Watcher w) {
        w.markDone();
        w.closeOlderCursor();
        leaveIndex(w);
        watchers.remove(w);
    }

    int liveWatcherCount() {
        return (int) indexCount(LiveIndex::size);
    }

    long watcherVisits() {
        return indexCount(LiveIndex::visits);
    }

    long valueIndexVisits() {
        return indexCount(LiveIndex::valueVisits);
    }

    long indexNodesExamined() {
        return indexCount(LiveIndex::nodesExamined);
    }

    /** A counter of the index, read under the lock (the index has none of its own). */
    private long indexCount(ToLongFunction<LiveIndex> counter) {
        lock.lock();
        try {
            return counter.applyAsLong(index);
        } finally {
            lock.unlock();
        }
    }
}
