package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.AttributeExtractor;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.schema.v1.Event;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The watch core of a fan-out node, and all a front end needs of it (Kubernetes' {@code Cacher}):
 * open a watch ({@link #watch}) and pull its frames ({@link Watch#poll}), list at a revision,
 * wait for a revision, and ask readiness and status. The Kafka side drives it through
 * {@link #feed()}. A front end is a {@link WatchSink} that is woken and pulls; it knows nothing of
 * dispatch, parking, catch-up, bookmarks or 410, which the core decides the same way for every
 * transport (HTTP's JSON, protobuf and SSE, and the etcd API's gRPC).
 *
 * <p>Inside, by job: {@link Dispatcher} (the feed thread: cache, index, live dispatch),
 * {@link CatchUp} (a watcher's pull: initial events, catch-up from the window or the events
 * topic), {@link RevisionWaiters}, {@link BookmarkTimer} (bookmarks, progress notifications and
 * the expiry of parked watchers), {@link Expiry} (every 410), {@link Readiness} and
 * {@link NodeStatus}.
 *
 * <p>Thread-safety: every method may be called from any thread; see docs/ARCHITECTURE.md,
 * "Concurrency model", for which thread owns what and the lock order.
 */
public final class WatchCore implements AutoCloseable {
    private final Dispatcher dispatcher;
    private final CatchUp catchUp;
    private final BookmarkTimer timer;
    private final Deadlines deadlines;

    /**
     * A core with an empty cache, not ready until its feed says so. Its bookmark timer starts with
     * {@link #start()}.
     */
    public WatchCore(CoreSettings settings, FrameEncoder encoder) {
        this.dispatcher = new Dispatcher(settings, encoder);
        this.catchUp = new CatchUp(dispatcher);
        this.timer = new BookmarkTimer(dispatcher, settings.bookmarkInterval());
        this.deadlines = new Deadlines(settings.nodeId());
    }

    /** Starts the bookmark timer (a daemon thread). Without it, rounds run only by {@link #tickNow()}. */
    public void start() {
        timer.start();
    }

    /** Stops the bookmark timer. Open watches stay as they are ({@link #finishAll} ends them). */
    @Override
    public void close() {
        timer.close();
        deadlines.close();
    }

    /** What the Kafka side feeds the core with (one feed thread). */
    public CacheFeed feed() {
        return dispatcher;
    }

    /** The node's frame encoder (its encode counters). */
    public FrameEncoder frameEncoder() {
        return dispatcher.encoder();
    }

    /** Dispatch and watcher counters. */
    public WatchStats stats() {
        return dispatcher.stats();
    }

    /** Revisions, sizes and watcher counts, read without the core's lock. */
    public NodeStatus status() {
        return dispatcher.status();
    }

    /** Whether the node serves, and why not. */
    public Readiness readiness() {
        return dispatcher.readiness();
    }

    /**
     * Serves watches and parked watchers from before the window out of {@code olderHistory} (the
     * events topic) instead of ending them with 410. Call before the node serves.
     */
    public void useOlderHistory(OlderHistory olderHistory) {
        dispatcher.expiry().useOlderHistory(olderHistory);
    }

    /**
     * Registers a front end's reading of stored objects: from now on an event's objects get
     * their attributes computed at most once, for selectors and indexed dispatch
     * ({@link WatchSpec#selector()}, {@link WatchSpec#indexValue()}): on the feed thread before
     * dispatch while such a watcher is open, otherwise on first need, and never when nothing asks. Call before the node serves;
     * one extractor per core.
     *
     * @throws IllegalStateException if one is registered already
     */
    public void useAttributes(AttributeExtractor extractor) {
        dispatcher.useAttributes(extractor);
    }

    /**
     * Tells {@code observer} of every revision the feed applies, on the feed thread, just before
     * the cache applies it (a front end keeping its own view of some objects, e.g. the
     * authorization policy, follows their changes so; a resync is not a revision and is not
     * observed: see {@link NodeStatus#resyncRevision()}). It must be quick and must not block or
     * throw: the feed waits for it. One observer per core, registered before the node serves.
     *
     * @throws IllegalStateException if one is registered already
     */
    public void observeRevisions(Consumer<List<Event>> observer) {
        dispatcher.observeRevisions(observer);
    }

    /** The older history in use, or null. */
    public OlderHistory olderHistory() {
        return dispatcher.expiry().older();
    }

    /**
     * The oldest cursor a watch may start from now: the window's start, or with an older history
     * the older of it and that history's floor (never across the latest resync). etcd's API
     * reports it plus one as {@code compact_revision}.
     */
    public long servableFromRevision() {
        return dispatcher.expiry().servableFromRevision();
    }

    /**
     * Opens a watch. The caller has checked readiness and waited until the cache's revision is
     * {@code >= spec.resourceVersion()}. The watch starts catching up from its start revision (or
     * sending its initial events) when its transport first polls it.
     *
     * @throws HistoryExpiredException if {@code spec.resourceVersion()} is older than the history
     *     ({@link #servableFromRevision()})
     * @throws TooManyReadsException if it is older than the window and the node cannot start
     *     another read of older history now
     * @throws IllegalStateException if {@code spec.resourceVersion()} is ahead of the cache
     */
    public Watch watch(WatchSpec spec, WatchSink sink) throws HistoryExpiredException, TooManyReadsException {
        long rv = spec.resourceVersion();
        OlderHistory older = dispatcher.expiry().older();
        if (!spec.sendInitialEvents() && rv > 0 && rv < dispatcher.status().historyStartRevision() && older != null) {
            // Asked before taking the lock that dispatch waits for: the reads have a monitor of their own.
            dispatcher.expiry().checkWatchFrom(rv);
            if (!older.canOpen(rv)) {
                throw new TooManyReadsException(
                        "this node reads as much older history as it may (--deep-read-max-readers); "
                                + "retry later or on another node");
            }
        }
        Watcher w = dispatcher.open(spec, sink);
        timer.register(w);
        return new Watch(w, dispatcher, catchUp, timer);
    }

    /**
     * The one way a front end opens a watch: refuses it when the node does not serve, waits (at
     * most {@code wait}) until the cache reaches its start revision, then opens it
     * ({@link #openNow}); {@code done} gets the outcome on {@code executor}, exactly once, unless
     * the returned handle cancelled the wait first (the client went away).
     *
     * @param wait the longest wait for a start revision ahead of the cache, or null for no deadline
     *     (etcd's watch waits for a future revision as long as the stream lives)
     * @return runs to cancel a wait that has not ended; then {@code done} is never called
     */
    public Runnable open(WatchSpec spec, WatchSink sink, Duration wait, Executor executor, Consumer<Opening> done) {
        return awaitRevision(spec.resourceVersion(), wait, executor, arrival -> {
            if (arrival.reached()) {
                done.accept(openNow(spec, sink));
            } else {
                done.accept(new Opening(
                        arrival.outcome() == Arrival.Outcome.NOT_READY
                                ? Opening.Outcome.NOT_READY
                                : Opening.Outcome.TIMED_OUT,
                        null,
                        arrival.status()));
            }
        });
    }

    /**
     * Opens a watch whose start revision the cache has reached, on this thread: the watch, or why
     * not (not serving, expired, too many reads of older history) as a typed outcome.
     *
     * @throws IllegalStateException if the start revision is ahead of the cache (use {@link #open})
     */
    public Opening openNow(WatchSpec spec, WatchSink sink) {
        String notServing = dispatcher.readiness().notServing();
        if (notServing != null) {
            return new Opening(Opening.Outcome.NOT_READY, null, Statuses.notReady(notServing));
        }
        try {
            return new Opening(Opening.Outcome.OPENED, watch(spec, sink), null);
        } catch (HistoryExpiredException e) {
            return new Opening(Opening.Outcome.EXPIRED, null, Statuses.expired(e.getMessage()));
        } catch (TooManyReadsException e) {
            return new Opening(Opening.Outcome.TOO_MANY_READS, null, Statuses.tooManyRequests(e.getMessage()));
        }
    }

    /**
     * The one way to wait for a revision (a read or a watch at a resourceVersion ahead of the
     * cache): {@code done} gets, on {@code executor} and exactly once unless cancelled,
     * {@link Arrival.Outcome#REACHED} once the cache's revision is {@code >= rev} and the node
     * serves, {@link Arrival.Outcome#NOT_READY} when it does not serve (at once, or when it fails
     * while waiting), or {@link Arrival.Outcome#TIMED_OUT} after {@code wait} (504, naming both
     * revisions).
     *
     * @param wait the longest wait, or null for no deadline
     * @return runs to cancel the wait; then {@code done} is never called
     */
    public Runnable awaitRevision(long rev, Duration wait, Executor executor, Consumer<Arrival> done) {
        String notServing = dispatcher.readiness().notServing();
        if (notServing != null) {
            executor.execute(() -> done.accept(new Arrival(Arrival.Outcome.NOT_READY, Statuses.notReady(notServing))));
            return () -> {};
        }
        AtomicBoolean settled = new AtomicBoolean();
        AtomicReference<ScheduledFuture<?>> deadline = new AtomicReference<>();
        RevisionWaiter waiter = awaitRevision(rev, () -> {
            if (settled.compareAndSet(false, true)) {
                ScheduledFuture<?> d = deadline.get();
                if (d != null) {
                    d.cancel(false);
                }
                executor.execute(() -> done.accept(arrivedAt()));
            }
        });
        if (wait != null && !settled.get()) {
            deadline.set(deadlines.after(wait.toMillis(), () -> {
                if (cancel(waiter) && settled.compareAndSet(false, true)) {
                    executor.execute(() -> done.accept(new Arrival(
                            Arrival.Outcome.TIMED_OUT,
                            Statuses.timeout("resourceVersion " + rev + " is ahead of this node (at revision "
                                    + dispatcher.status().revision() + ") and it did not catch up within "
                                    + wait.toMillis() + " ms; retry, or ask another node"))));
                }
            }));
        }
        return () -> {
            if (settled.compareAndSet(false, true)) {
                cancel(waiter);
                ScheduledFuture<?> d = deadline.get();
                if (d != null) {
                    d.cancel(false);
                }
            }
        };
    }

    /**
     * As {@link #awaitRevision(long, Duration, Executor, Consumer)}, blocking the calling thread
     * (a worker thread of a blocking read) until the outcome, at most about {@code wait}.
     *
     * @throws InterruptedException if the thread is interrupted while it waits (the wait is cancelled)
     */
    public Arrival awaitRevision(long rev, Duration wait) throws InterruptedException {
        CompletableFuture<Arrival> arrival = new CompletableFuture<>();
        Runnable cancel = awaitRevision(rev, wait, Runnable::run, arrival::complete);
        try {
            return arrival.get();
        } catch (InterruptedException e) {
            cancel.run();
            throw e;
        } catch (ExecutionException e) {
            throw new IllegalStateException("a revision wait completes normally", e);
        }
    }

    /** After a waiter fired: reached, unless the node stopped serving. */
    private Arrival arrivedAt() {
        String notServing = dispatcher.readiness().notServing();
        return notServing == null
                ? Arrival.REACHED
                : new Arrival(Arrival.Outcome.NOT_READY, Statuses.notReady(notServing));
    }

    /**
     * Calls {@code onReached} (on the feed thread, or on this one when already there) once the
     * cache's revision is {@code >= rev} or the node failed; the caller re-checks which.
     * {@link #cancel} the returned waiter on timeout.
     */
    RevisionWaiter awaitRevision(long rev, Runnable onReached) {
        RevisionWaiter w = new RevisionWaiter(rev, onReached);
        if (!dispatcher.addWaiter(w)) {
            w.complete();
        }
        return w;
    }

    /** @return true if the waiter was cancelled before it completed (its callback never runs) */
    boolean cancel(RevisionWaiter w) {
        if (!w.tryCancel()) {
            return false;
        }
        dispatcher.removeWaiter(w);
        return true;
    }

    /**
     * One page of a range read at {@code atRevision} (0 = the cache's revision).
     *
     * @throws HistoryExpiredException if {@code atRevision} is older than the history window
     */
    public ListPage list(KeyRange range, ByteString from, long atRevision, int limit) throws HistoryExpiredException {
        return list(range, from, atRevision, limit, false);
    }

    /**
     * As {@link #list(KeyRange, ByteString, long, int)}; with {@code countRemaining} the page also
     * counts the key-values after it ({@link ListPage#remaining()}), a walk over the rest of the
     * range under the core's lock: for the first page of a paged list only.
     *
     * @param atRevision 0 = the cache's revision; otherwise at most the cache's revision
     * @throws HistoryExpiredException if {@code atRevision} is older than the history window
     * @throws IllegalArgumentException if {@code atRevision} is ahead of the cache
     */
    public ListPage list(KeyRange range, ByteString from, long atRevision, int limit, boolean countRemaining)
            throws HistoryExpiredException {
        return dispatcher.list(range, from, atRevision, limit, countRemaining);
    }

    /** The current state of a range (for tests and tools). */
    public List<StateEntry> snapshot(KeyRange range) {
        return dispatcher.snapshot(range);
    }

    /**
     * Ends every open stream (node shutdown): each gets a final BOOKMARK when it allowed
     * bookmarks, then its end.
     *
     * @return the number of streams ended
     */
    public int finishAll() {
        int n = 0;
        for (Watcher w : dispatcher.watchers().all()) {
            dispatcher.finish(w);
            n++;
        }
        return n;
    }

    /**
     * Runs one round of the bookmark timer now, on this thread: bookmarks, progress notifications
     * and the expiry of parked watchers behind the history (tests and tools; the timer runs them
     * on its own after {@link #start()}).
     */
    public void tickNow() {
        timer.runAll();
    }
}
