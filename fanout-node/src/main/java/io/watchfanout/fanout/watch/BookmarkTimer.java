package io.watchfanout.fanout.watch;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's periodic work on watchers, on one timer thread of its own, whatever their transport:
 * every bookmark interval, a BOOKMARK to each watcher that allows them and has room (Kubernetes'
 * watch cache bookmarks), and 410 Expired to a parked watcher whose cursor fell behind the history
 * the node can serve, even if its client reads nothing; and for watches with a progress interval
 * of their own (etcd's {@code progress_notify}), a progress notification every such interval to
 * those that were sent no event since the last one (etcd's {@code v3rpc} progress ticker).
 *
 * <p>A round queues shared bookmark frames (memoized by the encoder) and wakes transports; it
 * never writes.
 *
 * <p>Thread-safety: the timer thread runs the rounds; registration from any thread.
 */
final class BookmarkTimer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BookmarkTimer.class);

    private final Dispatcher dispatcher;
    private final Duration interval;
    /** Watches with a progress interval of their own, by that interval in milliseconds. */
    private final Map<Long, Set<Watcher>> byProgressInterval = new ConcurrentHashMap<>();

    private volatile ScheduledExecutorService timer;

    BookmarkTimer(Dispatcher dispatcher, Duration interval) {
        this.dispatcher = dispatcher;
        this.interval = interval;
    }

    /** Starts the rounds. Until then (tests) rounds run only through {@link #runAll()}. */
    synchronized void start() {
        if (timer != null) {
            return;
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(
                    r, "watchfanout-bookmarks-" + dispatcher.settings().nodeId());
            t.setDaemon(true);
            return t;
        });
        long every = interval.toMillis();
        timer.scheduleAtFixedRate(this::guardedRound, every, every, TimeUnit.MILLISECONDS);
        for (Long ms : byProgressInterval.keySet()) {
            scheduleProgress(ms);
        }
    }

    void register(Watcher w) {
        Duration progress = w.spec.progressInterval();
        if (progress == null) {
            return;
        }
        long ms = progress.toMillis();
        Set<Watcher> group = byProgressInterval.get(ms);
        if (group == null) {
            // Created and scheduled under the monitor that start() takes, so each interval runs once.
            synchronized (this) {
                group = byProgressInterval.get(ms);
                if (group == null) {
                    group = ConcurrentHashMap.newKeySet();
                    byProgressInterval.put(ms, group);
                    if (timer != null) {
                        scheduleProgress(ms);
                    }
                }
            }
        }
        group.add(w);
    }

    void unregister(Watcher w) {
        Duration progress = w.spec.progressInterval();
        if (progress != null) {
            Set<Watcher> group = byProgressInterval.get(progress.toMillis());
            if (group != null) {
                group.remove(w);
            }
        }
    }

    private void scheduleProgress(long ms) {
        timer.scheduleAtFixedRate(
                () -> {
                    try {
                        progressRound(ms);
                    } catch (RuntimeException e) {
                        LOG.error("progress round failed", e);
                    }
                },
                ms,
                ms,
                TimeUnit.MILLISECONDS);
    }

    private void guardedRound() {
        try {
            round();
        } catch (RuntimeException e) {
            // A bug must not end the rounds: bookmarks and expiry would stop for every watcher.
            LOG.error("bookmark round failed", e);
        }
    }

    /** One bookmark round and one round of every progress interval, now, on this thread. */
    void runAll() {
        round();
        for (Long ms : byProgressInterval.keySet()) {
            progressRound(ms);
        }
    }

    /** Every watcher: 410 for a parked one that fell behind; a bookmark for a Kubernetes watch. */
    private void round() {
        for (Watcher w : dispatcher.watchers().all()) {
            long parkedAt = w.catchUpCursor();
            if (parkedAt >= 0 && dispatcher.expiry().isBehind(parkedAt)) {
                dispatcher.expire(w);
            } else if (w.spec.progressInterval() == null) {
                bookmark(w, false);
            }
        }
    }

    private void progressRound(long ms) {
        Set<Watcher> group = byProgressInterval.get(ms);
        if (group == null) {
            return;
        }
        for (Watcher w : group) {
            bookmark(w, true);
        }
    }

    private void bookmark(Watcher w, boolean quietOnly) {
        long dispatched = dispatcher.status().dispatchedRevision();
        long rev = w.tickRevision(dispatched, quietOnly);
        if (rev <= 0) {
            return;
        }
        // The encoder memoizes the newest bookmark's frames: most watchers share its revision.
        ByteBuffer frame = w.spec.bookmark(dispatcher.encoder(), rev);
        switch (w.addBookmark(frame, rev, dispatcher.status().dispatchedRevision())) {
            case QUEUED_WAKE -> {
                dispatcher.stats().bookmarksSent.increment();
                w.sink.wakeUp();
            }
            case QUEUED -> dispatcher.stats().bookmarksSent.increment();
            default -> {
                // Something moved meanwhile or the queue filled: the next round tries again.
            }
        }
    }

    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }
}
