package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.cache.StateEntry;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One watch stream, transport-agnostic: Kubernetes' {@code cacheWatcher} with etcd's
 * synced/unsynced split. Its frames are references to shared, memoized buffers.
 *
 * <p>Phases: {@code INITIAL} (sending the initial events of sendInitialEvents), then
 * {@code CATCHING_UP} (reading the history window after its cursor at its transport's pace,
 * outside live dispatch), then {@code LIVE} (in the hub's index; the feed thread offers each
 * matching revision into a short bounded queue). A live watcher whose queue would overflow is
 * parked: back to {@code CATCHING_UP} from the last revision it fully received, so a slow
 * reader costs its cursor and a bounded queue, never a growing backlog (docs/ARCHITECTURE.md, invariant 7). A
 * watcher whose cursor falls behind the window is ended with 410 Expired. {@code ENDING}:
 * the last frames are queued; {@code DONE}: the transport has taken them.
 *
 * <p>Thread-safety: the queue, phase and cursor are guarded by this object's monitor; the
 * index handle by the hub's lock (lock order: hub lock, then this monitor). The initial-event
 * iterator belongs to the transport's thread (the one calling {@link #poll}).
 */
public final class Watcher {
  /** What {@link #poll} found. */
  public enum PollResult {
    /** Frames were added to the output list. */
    FRAMES,
    /** Nothing to send now; {@link WatchSink#wakeUp()} is called when there is. */
    IDLE,
    /** Catch-up made progress without frames; poll again soon (after other work). */
    YIELD,
    /** The stream is over: end it. */
    END
  }

  enum Phase { INITIAL, CATCHING_UP, LIVE, ENDING, DONE }

  private static final AtomicLong IDS = new AtomicLong();
  private static final int MAX_STEPS_PER_POLL = 8;

  private final long id = IDS.incrementAndGet();
  private final WatchSpec spec;
  private final WatchSink sink;
  private final WatchHub hub;
  private final FrameEncoder encoder;
  private final int capacity;

  private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>(8);
  /** Record timestamp of the newest live revision queued and not yet polled, 0 when none. */
  private long liveStampMillis;
  private Phase phase;
  private long cursor;
  private boolean parkedOnce;

  /** Guarded by the hub's lock. */
  RangeIndex.Handle<Watcher> handle;

  /** While catching up from older history: its cursor there (transport thread; closed by {@link #close}). */
  private volatile OlderHistory.Cursor olderCursor;

  private Iterator<StateEntry> initial;
  private final long initialRevision;

  Watcher(WatchSpec spec, WatchSink sink, WatchHub hub, int capacity, long cursor,
      List<StateEntry> initialState) {
    this.spec = spec;
    this.sink = sink;
    this.hub = hub;
    this.encoder = hub.encoder();
    this.capacity = capacity;
    this.cursor = cursor;
    this.initialRevision = cursor;
    if (initialState != null) {
      this.initial = initialState.iterator();
      this.phase = Phase.INITIAL;
    } else {
      this.phase = Phase.CATCHING_UP;
    }
    if (spec.startBookmark()) {
      queue.add(encoder.bookmark(cursor, spec.encoding()));
      hub.stats().bookmarksSent.increment();
    }
  }

  /** A process-unique id, for logs. */
  public long id() {
    return id;
  }

  /** What this watcher watches. */
  public WatchSpec spec() {
    return spec;
  }

  /** The revision this watcher has been handed every matching event up to. */
  public synchronized long cursor() {
    return cursor;
  }

  /** True while in live dispatch. */
  public synchronized boolean isLive() {
    return phase == Phase.LIVE;
  }

  /** True while catching up from history (new, or parked after an overflow). */
  public synchronized boolean isCatchingUp() {
    return phase == Phase.CATCHING_UP;
  }

  /** True once the stream is ending (its last frames are queued) or over. */
  public synchronized boolean isEnding() {
    return phase == Phase.ENDING || phase == Phase.DONE;
  }

  /** Frames waiting for the transport. */
  public synchronized int queued() {
    return queue.size();
  }

  Encoding encoding() {
    return spec.encoding();
  }

  // ---- feed thread ------------------------------------------------------------------

  /**
   * Offers the frames of one revision (only the events this watcher matches). Called by
   * the feed thread, never under the hub's lock.
   *
   * @param previousRevision the revision dispatched before this one: the cursor if parked
   * @return false if the watcher overflowed and was parked (the caller takes it out of the index)
   */
  boolean offerLive(ByteBuffer frame, List<ByteBuffer> frames, long revision, long previousRevision,
      long recordTimestampMillis) {
    int n = frame != null ? 1 : frames.size();
    boolean wake;
    boolean parked = false;
    synchronized (this) {
      if (phase != Phase.LIVE) {
        return true;
      }
      if (queue.size() + n > capacity) {
        phase = Phase.CATCHING_UP;
        cursor = previousRevision;
        parkedOnce = true;
        parked = true;
        hub.stats().parked.increment();
        wake = true;
      } else {
        wake = queue.isEmpty();
        if (frame != null) {
          queue.add(frame);
        } else {
          queue.addAll(frames);
        }
        cursor = revision;
        if (recordTimestampMillis > 0) {
          liveStampMillis = recordTimestampMillis;
        }
      }
    }
    if (wake) {
      sink.wakeUp();
    }
    return !parked;
  }

  /** Under the hub's lock, after an overflow: still parked, so leave the index. */
  synchronized boolean isParkedLocked() {
    return phase == Phase.CATCHING_UP;
  }

  // ---- transport thread -------------------------------------------------------------

  /**
   * Hands the transport up to {@code maxFrames} waiting frames, producing them first from
   * the initial state or the history window when the watcher is not live. Call from the
   * transport's thread when it can write; never concurrently with itself.
   *
   * @param out receives shared read-only frames ({@code duplicate()} them to write)
   */
  public PollResult poll(List<ByteBuffer> out, int maxFrames) {
    for (int step = 0; step < MAX_STEPS_PER_POLL; step++) {
      Phase p;
      int n = 0;
      long writtenStamp = 0;
      synchronized (this) {
        if (!queue.isEmpty()) {
          while (n < maxFrames && !queue.isEmpty()) {
            out.add(queue.poll());
            n++;
          }
          if (queue.isEmpty()) {
            writtenStamp = liveStampMillis;
            liveStampMillis = 0;
          }
          p = phase;
        } else {
          p = phase;
          if (p == Phase.ENDING || p == Phase.DONE) {
            phase = Phase.DONE;
            return PollResult.END;
          }
          if (p == Phase.LIVE) {
            return PollResult.IDLE;
          }
        }
      }
      if (n > 0) {
        // Counted and timed outside the monitor that dispatch takes.
        hub.stats().framesDelivered[spec.encoding().ordinal()].add(n);
        if (writtenStamp > 0) {
          // The newest live revision goes to the socket now: once per write, not per frame.
          hub.stats().written.observe(Math.max(0, System.currentTimeMillis() - writtenStamp) / 1000.0);
        }
        return PollResult.FRAMES;
      }
      if (p == Phase.INITIAL) {
        fillInitial();
      } else if (hub.catchUp(this)) {
        // Waiting for older history to be read: the read wakes the sink.
        return PollResult.IDLE;
      }
    }
    return PollResult.YIELD;
  }

  private void fillInitial() {
    List<ByteBuffer> frames = new ArrayList<>(Math.min(capacity, 64));
    while (frames.size() < capacity && initial.hasNext()) {
      StateEntry e = initial.next();
      frames.add(e.lastEvent() != null ? e.lastEvent().initialFrame(spec.encoding(), encoder)
          : encoder.initialEvent(e.kv(), spec.encoding()));
    }
    boolean done = !initial.hasNext();
    ByteBuffer end = done ? encoder.initialEventsEnd(initialRevision, spec.encoding()) : null;
    synchronized (this) {
      if (phase != Phase.INITIAL) {
        return;
      }
      queue.addAll(frames);
      if (done) {
        queue.add(end);
        hub.stats().bookmarksSent.increment();
        initial = null;
        phase = Phase.CATCHING_UP;
      }
    }
  }

  OlderHistory.Cursor olderCursor() {
    return olderCursor;
  }

  void olderCursor(OlderHistory.Cursor c) {
    olderCursor = c;
  }

  /** Leaves the read of older history, if in one. */
  void closeOlderCursor() {
    OlderHistory.Cursor c = olderCursor;
    if (c != null) {
      olderCursor = null;
      c.close();
    }
  }

  /** Wakes the transport (a read of older history has more). */
  void wakeSink() {
    sink.wakeUp();
  }

  /** The cursor to catch up from, or -1 when not catching up. */
  synchronized long catchUpCursor() {
    return phase == Phase.CATCHING_UP ? cursor : -1;
  }

  /**
   * Queues events read from history (whole revisions, only the events this watcher matches);
   * the cursor moves to {@code newCursor}. The last frame of each revision is the one that may
   * name a resume point (SSE id).
   */
  void enqueueCatchUp(List<CachedEvent> events, long newCursor) {
    if (spec.filters()) {
      events = events.stream().filter(spec::accepts).toList();
    }
    List<ByteBuffer> frames = new ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) {
      CachedEvent e = events.get(i);
      boolean last = i == events.size() - 1 || events.get(i + 1).revision() != e.revision();
      frames.add(e.frame(spec.encoding(), encoder, last));
    }
    synchronized (this) {
      if (phase == Phase.CATCHING_UP && newCursor >= cursor) {
        queue.addAll(frames);
        cursor = newCursor;
      }
    }
  }

  /**
   * Under the hub's lock: joins live dispatch if still catching up and the cursor has
   * reached {@code cacheRevision}. The caller adds it to the index in the same critical
   * section, so no revision falls between catch-up and live (nothing lost or repeated).
   */
  synchronized boolean goLiveLocked(long cacheRevision) {
    if (phase != Phase.CATCHING_UP || cursor < cacheRevision) {
      return false;
    }
    phase = Phase.LIVE;
    if (parkedOnce) {
      parkedOnce = false;
      hub.stats().unparked.increment();
    }
    return true;
  }

  /**
   * Periodic work on the transport's thread (every bookmark interval): a BOOKMARK when
   * allowed and the queue has room, and the 410 of a parked watcher whose cursor fell
   * behind the history window even if its client is not reading.
   */
  public void tick() {
    long rev;
    synchronized (this) {
      if (phase == Phase.CATCHING_UP && hub.isBehindHistory(cursor)) {
        rev = -1;
      } else if (spec.allowBookmarks() && queue.size() < capacity) {
        rev = bookmarkRevisionLocked();
      } else {
        return;
      }
    }
    if (rev < 0) {
      hub.expire(this);
      return;
    }
    if (rev == 0) {
      return;
    }
    ByteBuffer frame = encoder.bookmark(rev, spec.encoding());
    boolean wake;
    synchronized (this) {
      // Queue it only if nothing moved meanwhile, so it never lands after a later event.
      if (bookmarkRevisionLocked() != rev || queue.size() >= capacity) {
        return;
      }
      wake = queue.isEmpty();
      queue.add(frame);
      hub.stats().bookmarksSent.increment();
    }
    if (wake) {
      sink.wakeUp();
    }
  }

  /** The revision a bookmark may carry now, or 0 when none (initial events, ending). */
  private long bookmarkRevisionLocked() {
    switch (phase) {
      case LIVE:
        // Live: everything up to the last revision the feed dispatched has been offered.
        return Math.max(cursor, hub.dispatchedRevision());
      case CATCHING_UP:
        return cursor;
      default:
        return 0;
    }
  }

  /**
   * Ends the stream normally (timeoutSeconds, node shutdown): leaves dispatch, queues a
   * final BOOKMARK when bookmarks are allowed, then the transport ends the stream.
   */
  public void finish() {
    hub.leaveIndex(this);
    synchronized (this) {
      if (phase == Phase.ENDING || phase == Phase.DONE) {
        return;
      }
      long rev = spec.allowBookmarks() ? bookmarkRevisionLocked() : 0;
      if (rev > 0) {
        queue.add(encoder.bookmark(rev, spec.encoding()));
        hub.stats().bookmarksSent.increment();
      }
      phase = Phase.ENDING;
    }
    sink.wakeUp();
  }

  /**
   * Ends the stream with an ERROR frame carrying {@code status}; queued frames are dropped.
   *
   * @return false if the stream was already ending or over (nothing changed)
   */
  public boolean endWithError(Status status) {
    hub.leaveIndex(this);
    ByteBuffer frame = encoder.error(status, spec.encoding());
    synchronized (this) {
      if (phase == Phase.ENDING || phase == Phase.DONE) {
        return false;
      }
      queue.clear();
      queue.add(frame);
      phase = Phase.ENDING;
    }
    sink.wakeUp();
    return true;
  }

  /** The transport is gone (client disconnected or stream ended): forget this watcher. */
  public void close() {
    synchronized (this) {
      phase = Phase.DONE;
      queue.clear();
      initial = null;
    }
    closeOlderCursor();
    hub.unregister(this);
  }

  @Override
  public String toString() {
    return "watcher " + id + " on " + spec.range() + " (" + spec.encoding() + ")";
  }
}
