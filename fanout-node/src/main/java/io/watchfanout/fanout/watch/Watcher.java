package io.watchfanout.fanout.watch;

import io.watchfanout.common.RangeIndex;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The state of one watch stream, passive as etcd's {@code watcher} and Kubernetes'
 * {@code cacheWatcher}: the core moves it between its phases and counts what happens to it; it
 * holds no reference to the core and calls nothing but its transport's {@link WatchSink#wakeUp()}
 * (through the core). Its frames are references to shared, memoized buffers.
 *
 * <p>Phases: {@code INITIAL} (the initial events of sendInitialEvents are being produced), then
 * {@code CATCHING_UP} (read from history after its cursor at its transport's pace, outside live
 * dispatch; {@link CatchUp}), then {@code LIVE} (in the dispatcher's index; the feed thread
 * offers each matching revision into a short bounded queue). A live watcher whose queue would
 * overflow is parked: back to {@code CATCHING_UP} from the last revision it fully received, so a
 * slow reader costs its cursor and a bounded queue, never a growing backlog (docs/ARCHITECTURE.md,
 * invariant 7). {@code ENDING}: the last frames are queued; {@code DONE}: the transport has taken
 * them, or has gone.
 *
 * <p>Thread-safety: the queue, phase and cursor are guarded by this object's monitor; the index
 * handle by the dispatcher's lock (lock order: the dispatcher's lock, then this monitor). The
 * initial-event iterator and the drained stamp belong to the transport's thread (the one that
 * polls).
 */
final class Watcher {
    enum Phase {
        INITIAL,
        CATCHING_UP,
        LIVE,
        ENDING,
        DONE
    }

    /** What offering a live revision did. */
    enum Offer {
        /** Queued; the queue was not empty, so the transport knows already. */
        QUEUED,
        /** Queued into an empty queue: wake the transport. */
        QUEUED_WAKE,
        /** It did not fit: the watcher is parked (take it out of the index, wake the transport). */
        PARKED,
        /** Not queued (not live, or it moved on meanwhile): nothing changed. */
        NOT_QUEUED
    }

    /** What joining live dispatch did. */
    enum GoLive {
        NO,
        LIVE,
        LIVE_AFTER_PARKING
    }

    private static final AtomicLong IDS = new AtomicLong();

    final long id = IDS.incrementAndGet();
    final WatchSpec spec;
    final WatchSink sink;
    private final int capacity;

    private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>(8);
    /** Record timestamp of the newest live revision queued and not yet polled, 0 when none. */
    private long liveStampMillis;

    private Phase phase;
    private long cursor;
    private boolean parkedOnce;
    /** Event frames were queued since the last progress tick (etcd's progress goes to quiet watches only). */
    private boolean eventsSinceTick;

    /** Guarded by the dispatcher's lock: its entry in the range index while live and not indexed by value. */
    RangeIndex.Handle<Watcher> handle;
    /** Guarded by the dispatcher's lock: true while live in a bucket of {@link LiveIndex}'s value indexes. */
    boolean inValueIndex;

    /** While catching up from older history: its cursor there (transport thread; closed on close). */
    volatile OlderHistory.Cursor olderCursor;

    /** Transport thread only: the initial state still to send, or null. */
    Iterator<StateEntry> initial;

    final long initialRevision;
    /** Transport thread only: the live stamp taken by the last {@link #drain} that emptied the queue. */
    private long drainedStampMillis;

    /**
     * @param capacity the bound of the live queue, {@code >= 1}
     * @param cursor the revision the watcher has every matching event up to
     * @param initialState the initial state to send first (sendInitialEvents), or null
     * @param startBookmark a first frame (a BOOKMARK at the start revision), or null
     */
    Watcher(
            WatchSpec spec,
            WatchSink sink,
            int capacity,
            long cursor,
            List<StateEntry> initialState,
            ByteBuffer startBookmark) {
        this.spec = spec;
        this.sink = sink;
        this.capacity = capacity;
        this.cursor = cursor;
        this.initialRevision = cursor;
        if (initialState != null) {
            this.initial = initialState.iterator();
            this.phase = Phase.INITIAL;
        } else {
            this.phase = Phase.CATCHING_UP;
        }
        if (startBookmark != null) {
            queue.add(startBookmark);
        }
    }

    Encoding encoding() {
        return spec.encoding();
    }

    int capacity() {
        return capacity;
    }

    synchronized long cursor() {
        return cursor;
    }

    synchronized boolean isLive() {
        return phase == Phase.LIVE;
    }

    synchronized boolean isCatchingUp() {
        return phase == Phase.CATCHING_UP;
    }

    synchronized boolean isEnding() {
        return phase == Phase.ENDING || phase == Phase.DONE;
    }

    synchronized int queued() {
        return queue.size();
    }

    /** The cursor to catch up from, or -1 when not catching up. */
    synchronized long catchUpCursor() {
        return phase == Phase.CATCHING_UP ? cursor : -1;
    }

    // ---- live dispatch (feed thread) ----------------------------------------------------

    /**
     * Offers the frames of one revision (one frame, or several of a multi-event revision).
     *
     * @param previousRevision the revision dispatched before this one: the cursor if parked
     */
    synchronized Offer offerLive(
            ByteBuffer frame,
            List<ByteBuffer> frames,
            long revision,
            long previousRevision,
            long recordTimestampMillis) {
        if (phase != Phase.LIVE) {
            return Offer.NOT_QUEUED;
        }
        int n = frame != null ? 1 : frames.size();
        if (queue.size() + n > capacity) {
            phase = Phase.CATCHING_UP;
            cursor = previousRevision;
            parkedOnce = true;
            return Offer.PARKED;
        }
        boolean wasEmpty = queue.isEmpty();
        if (frame != null) {
            queue.add(frame);
        } else {
            queue.addAll(frames);
        }
        cursor = revision;
        eventsSinceTick = true;
        if (recordTimestampMillis > 0) {
            liveStampMillis = recordTimestampMillis;
        }
        return wasEmpty ? Offer.QUEUED_WAKE : Offer.QUEUED;
    }

    /** Under the dispatcher's lock, after an overflow: still parked, so it leaves the index. */
    synchronized boolean isParkedLocked() {
        return phase == Phase.CATCHING_UP;
    }

    /**
     * Under the dispatcher's lock: joins live dispatch if catching up and the cursor has reached
     * {@code cacheRevision}; the caller adds it to the index in the same critical section, so that
     * no revision falls between catch-up and live.
     */
    synchronized GoLive goLiveLocked(long cacheRevision) {
        if (phase != Phase.CATCHING_UP || cursor < cacheRevision) {
            return GoLive.NO;
        }
        phase = Phase.LIVE;
        if (parkedOnce) {
            parkedOnce = false;
            return GoLive.LIVE_AFTER_PARKING;
        }
        return GoLive.LIVE;
    }

    // ---- the transport's pull -----------------------------------------------------------

    /**
     * Moves up to {@code maxFrames} waiting frames into {@code out}.
     *
     * @return the number moved
     */
    synchronized int drain(List<ByteBuffer> out, int maxFrames) {
        int n = 0;
        while (n < maxFrames && !queue.isEmpty()) {
            out.add(queue.poll());
            n++;
        }
        if (n > 0 && queue.isEmpty()) {
            drainedStampMillis = liveStampMillis;
            liveStampMillis = 0;
        }
        return n;
    }

    /** The stamp of the newest live revision the last drain emptied the queue of, 0 for none; taken once. */
    long takeDrainedStamp() {
        long s = drainedStampMillis;
        drainedStampMillis = 0;
        return s;
    }

    /**
     * The phase when nothing is queued, or null when frames are waiting. An ending watcher with
     * nothing queued is done.
     */
    synchronized Phase phaseIfEmpty() {
        if (!queue.isEmpty()) {
            return null;
        }
        if (phase == Phase.ENDING) {
            phase = Phase.DONE;
        }
        return phase;
    }

    /**
     * Queues initial-event frames; with {@code last} the initial events are over: {@code end} (the
     * bookmark that closes them, or null when the watch wants none) is queued and the watcher
     * catches up from the initial state's revision.
     *
     * @return false if the watcher is no longer sending initial events (nothing queued)
     */
    synchronized boolean addInitial(List<ByteBuffer> frames, boolean last, ByteBuffer end) {
        if (phase != Phase.INITIAL) {
            return false;
        }
        queue.addAll(frames);
        if (last) {
            if (end != null) {
                queue.add(end);
            }
            initial = null;
            phase = Phase.CATCHING_UP;
        }
        return true;
    }

    /**
     * Queues frames read from history (whole revisions); the cursor moves to {@code newCursor}.
     * Nothing happens if the watcher stopped catching up meanwhile.
     */
    synchronized void addCatchUp(List<ByteBuffer> frames, long newCursor) {
        if (phase == Phase.CATCHING_UP && newCursor >= cursor) {
            queue.addAll(frames);
            cursor = newCursor;
            if (!frames.isEmpty()) {
                eventsSinceTick = true;
            }
        }
    }

    // ---- bookmarks and endings ----------------------------------------------------------

    /**
     * The revision a bookmark may carry now, or 0 when none (initial events, ending).
     *
     * @param dispatchedRevision the last revision whose live dispatch is complete
     */
    private long bookmarkRevisionLocked(long dispatchedRevision) {
        switch (phase) {
            case LIVE:
                // Live: everything up to the last revision the feed dispatched has been offered.
                return Math.max(cursor, dispatchedRevision);
            case CATCHING_UP:
                return cursor;
            default:
                return 0;
        }
    }

    /**
     * The revision of a periodic bookmark, or 0 for none now: bookmarks not allowed, the queue
     * full, nothing to say, or (with {@code quietOnly}, etcd's progress notify) events queued
     * since the last tick. Clears the since-last-tick mark when {@code quietOnly}.
     */
    synchronized long tickRevision(long dispatchedRevision, boolean quietOnly) {
        boolean busy = eventsSinceTick;
        if (quietOnly) {
            eventsSinceTick = false;
        }
        if (!spec.allowBookmarks() || queue.size() >= capacity || (quietOnly && busy)) {
            return 0;
        }
        return bookmarkRevisionLocked(dispatchedRevision);
    }

    /**
     * Queues a periodic bookmark built for {@code revision}, unless anything moved meanwhile (so it
     * never lands after a later event) or the queue filled.
     *
     */
    synchronized Offer addBookmark(ByteBuffer frame, long revision, long dispatchedRevision) {
        if (bookmarkRevisionLocked(dispatchedRevision) != revision || queue.size() >= capacity) {
            return Offer.NOT_QUEUED;
        }
        boolean wasEmpty = queue.isEmpty();
        queue.add(frame);
        return wasEmpty ? Offer.QUEUED_WAKE : Offer.QUEUED;
    }

    /** What {@link #finish} did. */
    enum Finish {
        ALREADY_ENDING,
        ENDED,
        ENDED_WITH_BOOKMARK
    }

    /**
     * Ends the stream normally after the queued frames and, when bookmarks are allowed, a final
     * BOOKMARK at the revision it has everything up to (built with {@code encoder} under the
     * monitor, so that no frame queued later can precede it in revision).
     */
    synchronized Finish finish(FrameEncoder encoder, long dispatchedRevision) {
        if (phase == Phase.ENDING || phase == Phase.DONE) {
            return Finish.ALREADY_ENDING;
        }
        long rev = spec.allowBookmarks() ? bookmarkRevisionLocked(dispatchedRevision) : 0;
        phase = Phase.ENDING;
        if (rev > 0) {
            queue.add(spec.bookmark(encoder, rev));
            return Finish.ENDED_WITH_BOOKMARK;
        }
        return Finish.ENDED;
    }

    /**
     * Ends the stream with {@code errorFrame} only: queued frames are dropped.
     *
     * @return false if it was already ending or over (nothing changed)
     */
    synchronized boolean endWith(ByteBuffer errorFrame) {
        if (phase == Phase.ENDING || phase == Phase.DONE) {
            return false;
        }
        queue.clear();
        queue.add(errorFrame);
        phase = Phase.ENDING;
        return true;
    }

    /** The transport is gone: nothing more is queued or sent. */
    synchronized void markDone() {
        phase = Phase.DONE;
        queue.clear();
        initial = null;
    }

    /** Leaves the read of older history, if in one. */
    void closeOlderCursor() {
        OlderHistory.Cursor c = olderCursor;
        if (c != null) {
            olderCursor = null;
            c.close();
        }
    }

    @Override
    public String toString() {
        return "watcher " + id + " on " + spec.range() + " (" + spec.encoding() + ")";
    }
}
