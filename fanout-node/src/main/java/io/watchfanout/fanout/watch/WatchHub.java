package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.cache.CacheFeed;
import io.watchfanout.fanout.cache.HistoryExpiredException;
import io.watchfanout.fanout.cache.HistoryRead;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.cache.ListPage;
import io.watchfanout.fanout.cache.PreloadedRevision;
import io.watchfanout.fanout.cache.StateEntry;
import io.watchfanout.fanout.cache.WatchCache;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The center of the node: owns the {@link WatchCache}, the index of live watchers and the
 * dispatch of each revision to them (Kubernetes' {@code Cacher}). It is the cache's
 * {@link CacheFeed} (one feed thread applies revisions) and serves watches and lists.
 *
 * <p>Dispatch, as ZooKeeper's {@code triggerWatch}: under the lock the feed thread applies a
 * revision and picks the watchers whose range holds one of its keys (cost in proportion to
 * the matches, {@link RangeIndex}); after releasing it, it offers each of them its frames,
 * built once per encoding. Nothing writes to a socket, calls a transport or blocks under the
 * lock. A watcher that overflows is parked and taken out of the index; it catches up from
 * history on its transport's thread and rejoins under the lock once its cursor equals the
 * cache's revision, so the handoff loses and repeats nothing.
 *
 * <p>A resync record ends every open stream with 410 Expired ({@link #applyResync}).
 *
 * <p>Thread-safety: the cache, the index and the revision waiters are guarded by
 * {@code lock}; the feed methods run on one thread; the serving methods on any thread.
 */
public final class WatchHub implements CacheFeed {
  private static final Logger LOG = LoggerFactory.getLogger(WatchHub.class);
  /** History events one catch-up step looks at while holding the lock. */
  private static final int MAX_SCAN_PER_STEP = 4096;

  private final ReentrantLock lock = new ReentrantLock();
  private final WatchCache cache;
  private final RangeIndex<Watcher> index = new RangeIndex<>();
  private final PriorityQueue<RevisionWaiter> waiters =
      new PriorityQueue<>((a, b) -> Long.compare(a.revision, b.revision));
  private final Set<Watcher> watchers = ConcurrentHashMap.newKeySet();
  private final FrameEncoder encoder;
  private final WatchStats stats = new WatchStats();
  private final int queueFrames;
  private final String nodeId;
  /** Benchmark only: live dispatch encodes per watcher instead of sharing the memoized frame. */
  private final boolean encodePerWatcher;

  private volatile long revision;
  private volatile long revisionAdvancedNanos = System.nanoTime();
  private volatile long dispatchedRevision;
  private volatile long historyStartRevision;
  private volatile long oldestHistoryRevision;
  private volatile int historySize;
  private volatile int keyCount;
  private volatile boolean ready;
  private volatile String failure;
  private volatile String feedProblem;
  /** Where watches from before the window are served from, or null (they get 410). */
  private volatile OlderHistory older;
  /** The revision of the last resync applied, 0 for none: no history reaches across it. */
  private volatile long resyncRevision;

  /** Feed thread only: parked watchers found during one dispatch. */
  private final List<Watcher> overflowed = new ArrayList<>();
  private final List<Watcher> touched = new ArrayList<>();

  /**
   * @param cache the cache, owned by this hub from now on
   * @param encoder the node's frame encoder
   * @param queueFrames the bound of a live watcher's queue, {@code >= 1}
   * @param nodeId the node's id, for log lines
   */
  public WatchHub(WatchCache cache, FrameEncoder encoder, int queueFrames, String nodeId) {
    this(cache, encoder, queueFrames, nodeId, false);
  }

  /**
   * As {@link #WatchHub(WatchCache, FrameEncoder, int, String)}; with {@code encodePerWatcher}
   * (benchmark only: {@code --bench-encode-per-watcher}, {@code bin/bench memo}) live dispatch
   * encodes each watcher's frame anew instead of sharing the event's memoized frame, so the
   * benchmark can measure what encode-once saves. Catch-up from history still uses the memo.
   */
  public WatchHub(WatchCache cache, FrameEncoder encoder, int queueFrames, String nodeId, boolean encodePerWatcher) {
    if (queueFrames < 1) {
      throw new IllegalArgumentException("queueFrames: " + queueFrames + " (expected: >= 1)");
    }
    this.cache = cache;
    this.encoder = encoder;
    this.queueFrames = queueFrames;
    this.nodeId = nodeId;
    this.encodePerWatcher = encodePerWatcher;
  }

  FrameEncoder encoder() {
    return encoder;
  }

  /** The node's frame encoder (its encode counters). */
  public FrameEncoder frameEncoder() {
    return encoder;
  }

  /** Dispatch and watcher counters. */
  public WatchStats stats() {
    return stats;
  }

  // ---- state, lock-free reads -------------------------------------------------------

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

  /** Watches from a revision older than this get 410 Expired. */
  public long historyStartRevision() {
    return historyStartRevision;
  }

  /**
   * Serves watches and parked watchers from before the window out of {@code olderHistory} (the
   * events topic) instead of ending them with 410. Call before the node serves.
   */
  public void useOlderHistory(OlderHistory olderHistory) {
    this.older = olderHistory;
  }

  /** The older history in use, or null. */
  public OlderHistory olderHistory() {
    return older;
  }

  /**
   * The oldest cursor a watch may start from now: the window's start, or with an
   * {@link OlderHistory} the older of it and that history's floor (never across the latest
   * resync). A watch from before it gets 410 Expired; so does a parked watcher that falls behind it.
   */
  public long servableFromRevision() {
    long windowStart = historyStartRevision;
    OlderHistory o = older;
    if (o == null) {
      return windowStart;
    }
    return Math.min(windowStart, Math.max(o.floorRevision(), resyncRevision));
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

  /** True once the feed caught up with Kafka, until it fails. */
  public boolean isReady() {
    return ready && failure == null;
  }

  /** Why the node stopped serving, or null. */
  public String failure() {
    return failure;
  }

  /** Open watchers by encoding. */
  public long watcherCount(Encoding encoding) {
    return watchers.stream().filter(w -> w.encoding() == encoding).count();
  }

  /** Open watchers. */
  public int watcherCount() {
    return watchers.size();
  }

  /**
   * Frames waiting in watchers' queues, summed over the open watchers (each queue is bounded
   * by the watcher queue size plus one revision, whatever a watcher's backlog).
   */
  public long queuedFrames() {
    long n = 0;
    for (Watcher w : watchers) {
      n += w.queued();
    }
    return n;
  }

  /** Live watchers in the index. */
  public int liveWatcherCount() {
    lock.lock();
    try {
      return index.size();
    } finally {
      lock.unlock();
    }
  }

  /** Watchers visited by dispatch so far (matches handed out by the index). */
  public long watcherVisits() {
    lock.lock();
    try {
      return index.visits();
    } finally {
      lock.unlock();
    }
  }

  /** Interval-tree nodes examined by dispatch so far. */
  public long indexNodesExamined() {
    lock.lock();
    try {
      return index.nodesExamined();
    } finally {
      lock.unlock();
    }
  }

  private void publishLocked() {
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

  // ---- CacheFeed (the feed thread) --------------------------------------------------

  @Override
  public void loadState(List<KeyValue> sortedByKey) {
    lock.lock();
    try {
      cache.loadState(sortedByKey);
      publishLocked();
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
      publishLocked();
    } finally {
      lock.unlock();
    }
    dispatchedRevision = startRevision;
  }

  @Override
  public void applyRevision(List<Event> events, long recordTimestampMillis) {
    List<CachedEvent> applied;
    Map<Watcher, List<CachedEvent>> multi = null;
    List<RevisionWaiter> due;
    long previous;
    lock.lock();
    try {
      previous = cache.revision();
      applied = cache.applyRevision(events);
      if (applied.size() == 1) {
        CachedEvent only = applied.get(0);
        index.forEachMatching(only.key(), w -> {
          if (!w.spec().filters() || w.spec().accepts(only)) {
            touched.add(w);
          }
        });
      } else {
        Map<Watcher, List<CachedEvent>> byWatcher = new IdentityHashMap<>();
        for (CachedEvent e : applied) {
          index.forEachMatching(e.key(), w -> {
            if (!w.spec().filters() || w.spec().accepts(e)) {
              byWatcher.computeIfAbsent(w, k -> new ArrayList<>(2)).add(e);
            }
          });
        }
        multi = byWatcher;
      }
      publishLocked();
      due = dueWaitersLocked();
    } finally {
      lock.unlock();
    }
    long rev = applied.get(0).revision();
    if (multi == null) {
      CachedEvent event = applied.get(0);
      ByteBuffer[] byEncoding = new ByteBuffer[Encoding.values().length];
      for (Watcher w : touched) {
        int enc = w.encoding().ordinal();
        ByteBuffer frame;
        if (encodePerWatcher) {
          frame = encodeUnshared(event, w.encoding());
        } else {
          if (byEncoding[enc] == null) {
            byEncoding[enc] = event.frame(w.encoding(), encoder);
          }
          frame = byEncoding[enc];
        }
        if (!w.offerLive(frame, null, rev, previous, recordTimestampMillis)) {
          overflowed.add(w);
        }
      }
      touched.clear();
    } else {
      // A multi-event revision goes to each watcher whole: all its matching events at once.
      // Its last frame for this watcher is the one that may name a resume point (SSE id).
      for (Map.Entry<Watcher, List<CachedEvent>> m : multi.entrySet()) {
        Watcher w = m.getKey();
        List<CachedEvent> matched = m.getValue();
        List<ByteBuffer> frames = new ArrayList<>(matched.size());
        for (int i = 0; i < matched.size(); i++) {
          frames.add(encodePerWatcher ? encodeUnshared(matched.get(i), w.encoding())
              : matched.get(i).frame(w.encoding(), encoder, i == matched.size() - 1));
        }
        if (!w.offerLive(null, frames, rev, previous, recordTimestampMillis)) {
          overflowed.add(w);
        }
      }
    }
    if (!overflowed.isEmpty()) {
      lock.lock();
      try {
        for (Watcher w : overflowed) {
          if (w.handle != null && w.isParkedLocked()) {
            index.remove(w.handle);
            w.handle = null;
          }
        }
      } finally {
        lock.unlock();
      }
      overflowed.clear();
    }
    dispatchedRevision = rev;
    stats.eventsDispatched.add(applied.size());
    if (ready && recordTimestampMillis > 0) {
      // Once per revision, never per watcher; not while catching up after a rebuild.
      stats.applied.observe(Math.max(0, System.currentTimeMillis() - recordTimestampMillis) / 1000.0);
    }
    runWaiters(due);
  }

  /** Benchmark only ({@link #encodePerWatcher}): a fresh, unshared frame of {@code event}. */
  private ByteBuffer encodeUnshared(CachedEvent event, Encoding encoding) {
    return encoder.encodeEvent(event.event(), encoding);
  }

  @Override
  public void applyProgress(long progressRevision) {
    List<RevisionWaiter> due;
    lock.lock();
    try {
      cache.applyProgress(progressRevision);
      publishLocked();
      due = dueWaitersLocked();
    } finally {
      lock.unlock();
    }
    dispatchedRevision = Math.max(dispatchedRevision, progressRevision);
    runWaiters(due);
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
      this.resyncRevision = Math.max(this.resyncRevision, resyncRevision);
      publishLocked();
      due = dueWaitersLocked();
      // Watchers register under this lock: the ones seen here opened before the resync.
      predating = new ArrayList<>(watchers);
    } finally {
      lock.unlock();
    }
    dispatchedRevision = Math.max(dispatchedRevision, resyncRevision);
    stats.resyncs.increment();
    int ended = 0;
    for (Watcher w : predating) {
      if (w.endWithError(Statuses.expired("the node resynchronised at revision " + resyncRevision
          + " (etcd history was compacted); list again"))) {
        ended++;
      }
    }
    stats.endedByResync.add(ended);
    LOG.warn("[node {}] resync at revision {} with {} entries: history emptied, ended {} watch streams with "
        + "410 Expired (clients list again)", nodeId, resyncRevision, entries.size(), ended);
    runWaiters(due);
  }

  @Override
  public void tick() {
    lock.lock();
    try {
      cache.expireHistory();
      publishLocked();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void markReady() {
    ready = true;
  }

  @Override
  public void feedStale(String problem) {
    feedProblem = problem;
  }

  /** Why the feed is stale (see {@link CacheFeed#feedStale}), or null while it is fresh. */
  public String feedProblem() {
    return feedProblem;
  }

  @Override
  public void fail(String reason) {
    failure = reason;
    List<RevisionWaiter> all;
    lock.lock();
    try {
      all = new ArrayList<>(waiters);
      waiters.clear();
    } finally {
      lock.unlock();
    }
    for (Watcher w : watchers) {
      w.endWithError(Statuses.notReady("this node stopped serving: " + reason));
    }
    runWaiters(all);
  }

  private List<RevisionWaiter> dueWaitersLocked() {
    List<RevisionWaiter> due = null;
    while (!waiters.isEmpty() && waiters.peek().revision <= cache.revision()) {
      if (due == null) {
        due = new ArrayList<>();
      }
      due.add(waiters.poll());
    }
    return due == null ? List.of() : due;
  }

  private static void runWaiters(List<RevisionWaiter> due) {
    for (RevisionWaiter w : due) {
      w.complete();
    }
  }

  // ---- serving ----------------------------------------------------------------------

  /**
   * Calls {@code onReached} (on the feed thread, or on this one when already there) once the
   * cache's revision is {@code >= rev} or the node failed; the caller re-checks which.
   * {@link #cancel} the returned waiter on timeout.
   */
  public RevisionWaiter awaitRevision(long rev, Runnable onReached) {
    RevisionWaiter w = new RevisionWaiter(rev, onReached);
    boolean now;
    lock.lock();
    try {
      now = cache.revision() >= rev || failure != null;
      if (!now) {
        waiters.add(w);
      }
    } finally {
      lock.unlock();
    }
    if (now) {
      w.complete();
    }
    return w;
  }

  /** @return true if the waiter was cancelled before it completed */
  public boolean cancel(RevisionWaiter w) {
    if (!w.tryCancel()) {
      return false;
    }
    lock.lock();
    try {
      waiters.remove(w);
    } finally {
      lock.unlock();
    }
    return true;
  }

  /**
   * Opens a watcher. The caller has checked readiness and waited until the cache's revision
   * is {@code >= spec.resourceVersion()}. The watcher starts catching up from its start
   * revision (or sending its initial events) when its transport first polls it.
   *
   * @throws HistoryExpiredException if {@code spec.resourceVersion()} is older than the history
   *     ({@link #servableFromRevision()})
   * @throws TooManyReadsException if it is older than the window and the node cannot start
   *     another read of older history now
   */
  public Watcher watch(WatchSpec spec, WatchSink sink) throws HistoryExpiredException, TooManyReadsException {
    long rv = spec.resourceVersion();
    OlderHistory o = older;
    if (!spec.sendInitialEvents() && rv > 0 && rv < historyStartRevision && o != null) {
      // Asked before taking the lock that dispatch waits for: the reads have a monitor of their own.
      long servable = servableFromRevision();
      if (rv < servable) {
        throw new HistoryExpiredException(rv, servable);
      }
      if (!o.canOpen(rv)) {
        throw new TooManyReadsException("this node reads as much older history as it may (--deep-read-max-readers); "
            + "retry later or on another node");
      }
    }
    Watcher w;
    lock.lock();
    try {
      long current = cache.revision();
      if (spec.sendInitialEvents()) {
        w = new Watcher(spec, sink, this, queueFrames, current, cache.snapshot(spec.range()));
      } else {
        long from = spec.resourceVersion() == 0 ? current : spec.resourceVersion();
        if (from < cache.historyStartRevision()) {
          long servable = servableFromRevision();
          if (from < servable) {
            throw new HistoryExpiredException(from, servable);
          }
          // (Whether a read can be opened was asked above; if the window moved on since, the first
          // catch-up step opens one or ends the stream with 429.)
          stats.resumedFromOlder.increment();
        }
        if (from > current) {
          throw new IllegalStateException("resourceVersion " + from + " is ahead of the cache at "
              + current + "; await it first");
        }
        w = new Watcher(spec, sink, this, queueFrames, from, null);
        if (w.goLiveLocked(current)) {
          w.handle = index.add(spec.range(), w);
        }
      }
      watchers.add(w);
    } finally {
      lock.unlock();
    }
    return w;
  }

  /**
   * One catch-up step of a watcher that is not live, on its transport's thread: rejoin live
   * dispatch when its cursor is the cache's revision, else read the next events from history
   * (a bounded scan under the lock; frames are built after it), or end it with 410 Expired.
   */
  boolean catchUp(Watcher w) {
    HistoryRead read = null;
    boolean fromOlder = false;
    lock.lock();
    try {
      long cursor = w.catchUpCursor();
      if (cursor < 0) {
        return false;
      }
      if (w.goLiveLocked(cache.revision())) {
        if (w.handle == null) {
          w.handle = index.add(w.spec().range(), w);
        }
        return false;
      }
      if (cursor < cache.historyStartRevision() && older != null) {
        fromOlder = true;
      } else {
        read = cache.readHistory(cursor, w.spec().range(), queueFrames, MAX_SCAN_PER_STEP);
      }
    } catch (HistoryExpiredException e) {
      fromOlder = older != null;
    } finally {
      lock.unlock();
    }
    if (fromOlder) {
      return catchUpFromOlder(w);
    }
    if (read == null) {
      expire(w);
    } else {
      w.closeOlderCursor();
      stats.catchUpFromWindow.add(read.events().size());
      w.enqueueCatchUp(read.events(), read.cursor());
    }
    return false;
  }

  /**
   * One catch-up step from older history (the events topic), outside the lock.
   *
   * @return true when the watcher waits for the read (its sink is woken when there is more)
   */
  private boolean catchUpFromOlder(Watcher w) {
    OlderHistory.Cursor c = w.olderCursor();
    if (c == null) {
      if (w.cursor() < servableFromRevision()) {
        expire(w);
        return false;
      }
      try {
        c = older.open(w.cursor());
      } catch (TooManyReadsException e) {
        w.endWithError(Statuses.tooManyRequests(e.getMessage()));
        return false;
      }
      w.olderCursor(c);
    }
    OlderHistory.Step step = c.next(w.spec().range(), queueFrames, MAX_SCAN_PER_STEP, w::wakeSink);
    switch (step.kind()) {
      case EVENTS:
        stats.catchUpFromOlder.add(step.events().size());
        w.enqueueCatchUp(step.events(), step.cursor());
        return false;
      case WAIT:
        return true;
      case END:
        w.closeOlderCursor();
        w.enqueueCatchUp(List.of(), step.cursor());
        return false;
      case EXPIRED:
        w.closeOlderCursor();
        expire(w, step.message());
        return false;
      case FAILED:
      default:
        w.closeOlderCursor();
        w.endWithError(Statuses.unavailable(step.message()));
        return false;
    }
  }

  /** True when a watcher at {@code cursor} can no longer be served (410 Expired). */
  boolean isBehindHistory(long cursor) {
    return cursor < servableFromRevision();
  }

  /** Ends a watcher that fell behind the history this node can serve with 410 Expired. */
  void expire(Watcher w) {
    long servable = servableFromRevision();
    expire(w, "too old resource version: " + w.cursor() + " (the oldest this node can serve from is " + servable
        + "; the watcher fell behind it)");
  }

  private void expire(Watcher w, String why) {
    stats.endedExpired.increment();
    LOG.info("[node {}] {}: 410 Expired: {}", nodeId, w, why);
    w.endWithError(Statuses.expired(why + "; list again"));
  }

  /** Takes a watcher out of live dispatch (it stays registered until closed). */
  void leaveIndex(Watcher w) {
    lock.lock();
    try {
      if (w.handle != null) {
        index.remove(w.handle);
        w.handle = null;
      }
    } finally {
      lock.unlock();
    }
  }

  /** Forgets a closed watcher. */
  void unregister(Watcher w) {
    leaveIndex(w);
    watchers.remove(w);
  }

  /**
   * One page of a range read at {@code atRevision} (0 = the cache's revision).
   *
   * @throws HistoryExpiredException if {@code atRevision} is older than the history window
   */
  public ListPage list(KeyRange range, ByteString from, long atRevision, int limit)
      throws HistoryExpiredException {
    return list(range, from, atRevision, limit, false);
  }

  /**
   * As {@link #list(KeyRange, ByteString, long, int)}; with {@code countRemaining} the page also
   * counts the key-values after it ({@link ListPage#remaining()}), a walk over the rest of the
   * range under the hub's lock: for the first page of a paged list only.
   *
   * @param atRevision 0 = the cache's revision; otherwise at most the cache's revision
   * @throws HistoryExpiredException if {@code atRevision} is older than the history window
   * @throws IllegalArgumentException if {@code atRevision} is ahead of the cache
   */
  public ListPage list(KeyRange range, ByteString from, long atRevision, int limit, boolean countRemaining)
      throws HistoryExpiredException {
    lock.lock();
    try {
      long at = atRevision == 0 ? cache.revision() : atRevision;
      return cache.list(range, from == null ? range.start() : from, at, limit, countRemaining);
    } finally {
      lock.unlock();
    }
  }

  /** The current state of a range (for tests and tools). */
  public List<StateEntry> snapshot(KeyRange range) {
    lock.lock();
    try {
      return cache.snapshot(range);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Ends every open stream (node shutdown): each gets a final BOOKMARK when it allowed
   * bookmarks, then its end.
   *
   * @return the number of streams ended
   */
  public int finishAll() {
    int n = 0;
    for (Watcher w : watchers) {
      w.finish();
      n++;
    }
    return n;
  }
}
