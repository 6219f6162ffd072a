package io.watchfanout.ingester.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.watchfanout.schema.v1.Event;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingester's one etcd watch: the whole keyspace, with progress notify and prev_kv,
 * handed to the publisher thread through a queue bounded in bytes.
 *
 * <p>Why the whole keyspace: every etcd revision holds at least one event there, so the
 * revisions a watch delivers are dense and the publisher can prove it missed nothing
 * (docs/ARCHITECTURE.md, "Ingester"). Filtering by key prefix happens on the publisher thread.
 *
 * <p>The ingester owns its resume point: on any error or completion this feed closes the
 * watch (so jetcd's own resumption, which may restart past undelivered events, never
 * runs) and reports a {@link WatchSignal.Failed}; the publisher decides where to watch
 * from. jetcd callbacks run on a Vert.x event loop and never block here: they convert and
 * enqueue. When the queued bytes exceed the bound, the watch is closed and an
 * {@link WatchSignal.Overflow} is queued; nothing is lost because the publisher re-watches
 * from its own last published revision.
 *
 * <p>Thread-safety: {@link #watchFrom}, {@link #poll} and {@link #close} are called by the
 * publisher thread only; callbacks may run on any thread.
 */
public final class EtcdWatchFeed implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EtcdWatchFeed.class);
    private static final ByteSequence ALL_KEYS = ByteSequence.from(new byte[] {0});

    private final Client client;
    private final long maxQueuedBytes;
    private final LinkedBlockingQueue<WatchSignal> queue = new LinkedBlockingQueue<>();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicLong generation = new AtomicLong();
    /** The last generation that reported its end; its later callbacks are ignored. */
    private final AtomicLong endedGeneration = new AtomicLong();
    /** Closes watches off the event loop: Watcher.close may take a lock jetcd's callbacks hold. */
    private final ExecutorService closer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "etcd-watch-closer");
        t.setDaemon(true);
        return t;
    });

    private volatile Watch.Watcher watcher;
    /** Set by {@link #wakeUp}: polls no longer wait. */
    private volatile boolean wokenUp;

    /** The watcher of one generation, known to its own callbacks once jetcd returns it. */
    private static final class Handle {
        volatile Watch.Watcher watcher;
        volatile boolean closeRequested;

        /** Closes the watcher now, or as soon as it is known. */
        void close(ExecutorService closer) {
            closeRequested = true;
            Watch.Watcher w = watcher;
            if (w != null) {
                closer.execute(w::close);
            }
        }
    }

    /**
     * @param client a jetcd client whose maximum inbound message size is well above etcd's
     *     request limit (a large transaction's events arrive in one response)
     * @param maxQueuedBytes bound of the keys and values waiting for the publisher, &gt; 0
     */
    public EtcdWatchFeed(Client client, long maxQueuedBytes) {
        if (maxQueuedBytes <= 0) {
            throw new IllegalArgumentException("maxQueuedBytes: " + maxQueuedBytes + " (expected: > 0)");
        }
        this.client = client;
        this.maxQueuedBytes = maxQueuedBytes;
    }

    /**
     * Closes the current watch, if any, and starts a new one from {@code revision}
     * (inclusive). Signals of older watches are discarded from then on.
     *
     * @param revision the first revision to receive, &gt; 0
     * @return the new watch's generation
     */
    public long watchFrom(long revision) {
        closeCurrent();
        queue.clear();
        queuedBytes.set(0);
        long gen = generation.incrementAndGet();
        WatchOption option = WatchOption.builder()
                .withRange(ALL_KEYS)
                .withRevision(revision)
                .withPrevKV(true)
                .withProgressNotify(true)
                .build();
        Handle handle = new Handle();
        Watch.Listener listener = Watch.listener(
                response -> onNext(gen, handle, response),
                error -> onError(gen, handle, error),
                () -> onCompleted(gen, handle));
        watcher = client.getWatchClient().watch(ALL_KEYS, option, listener);
        handle.watcher = watcher;
        if (handle.closeRequested) {
            handle.close(closer);
        }
        log.info("watching etcd from revision {} (watch generation {})", revision, gen);
        return gen;
    }

    /**
     * Waits for the next signal of the current watch.
     *
     * @param timeout how long to wait
     * @return the signal, or {@code null} when none came in time
     * @throws InterruptedException when the publisher thread is interrupted
     */
    public WatchSignal poll(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = wokenUp ? 0 : deadline - System.nanoTime();
            WatchSignal signal = queue.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
            if (signal == null) {
                return null;
            }
            if (signal instanceof WatchSignal.Batch b) {
                queuedBytes.addAndGet(-b.batch().approximateBytes());
            }
            if (signal.generation() == generation.get()) {
                return signal;
            }
        }
    }

    /**
     * Ends a {@link #poll} that waits, and makes every later one return without waiting: the
     * ingester stops, and its publisher should see that now, not after the poll's timeout. Any
     * thread.
     */
    public void wakeUp() {
        wokenUp = true;
        // A signal of no generation: the waiting poll takes it, drops it and sees the flag.
        queue.add(new WatchSignal.Overflow(-1, 0));
    }

    /** Bytes of keys and values waiting in the queue. */
    public long queuedBytes() {
        return queuedBytes.get();
    }

    private boolean live(long gen) {
        return gen == generation.get() && gen != endedGeneration.get();
    }

    /** Marks the generation ended; true for the first caller only. */
    private boolean end(long gen) {
        return gen == generation.get() && endedGeneration.getAndSet(gen) != gen;
    }

    private void onNext(long gen, Handle handle, WatchResponse response) {
        if (!live(gen)) {
            return;
        }
        List<Event> events;
        try {
            events = events(response);
        } catch (RuntimeException e) {
            fail(gen, handle, e, 0);
            return;
        }
        long bytes = 64;
        for (Event event : events) {
            bytes += EtcdEvents.approximateBytes(event);
        }
        long before = queuedBytes.getAndAdd(bytes);
        // One response always fits, however large: otherwise a catch-up response bigger than the
        // bound would overflow forever.
        if (before > 0 && before + bytes > maxQueuedBytes && !events.isEmpty()) {
            queuedBytes.addAndGet(-bytes);
            if (end(gen)) {
                queue.add(new WatchSignal.Overflow(gen, before));
                handle.close(closer);
            }
            return;
        }
        boolean progress = response.isProgressNotify() || events.isEmpty();
        queue.add(new WatchSignal.Batch(
                gen,
                new WatchBatch(
                        response.getHeader().getRevision(), progress, events, bytes, System.currentTimeMillis())));
    }

    /** The response's events, from etcd's own message where jetcd lets it be read ({@link JetcdInternals}). */
    private static List<Event> events(WatchResponse response) {
        io.etcd.jetcd.api.WatchResponse raw = JetcdInternals.raw(response);
        if (raw != null) {
            List<Event> events = new ArrayList<>(raw.getEventsCount());
            for (io.etcd.jetcd.api.Event e : raw.getEventsList()) {
                events.add(EtcdEvents.toEvent(e));
            }
            return events;
        }
        List<Event> events = new ArrayList<>();
        for (WatchEvent e : response.getEvents()) {
            events.add(EtcdEvents.toEvent(e));
        }
        return events;
    }

    private void onError(long gen, Handle handle, Throwable error) {
        long compactRevision =
                error instanceof CompactedException ? ((CompactedException) error).getCompactedRevision() : 0;
        fail(gen, handle, error, compactRevision);
    }

    private void onCompleted(long gen, Handle handle) {
        fail(gen, handle, new IllegalStateException("etcd ended the watch"), 0);
    }

    private void fail(long gen, Handle handle, Throwable error, long compactRevision) {
        if (!end(gen)) {
            return;
        }
        queue.add(new WatchSignal.Failed(gen, error, compactRevision));
        handle.close(closer);
    }

    private void closeCurrent() {
        Watch.Watcher current = watcher;
        watcher = null;
        if (current != null) {
            current.close();
        }
    }

    /** Closes the current watch until the next {@link #watchFrom}; queued signals are dropped. */
    public void stop() {
        generation.incrementAndGet();
        closeCurrent();
        queue.clear();
        queuedBytes.set(0);
    }

    /** Closes the watch; signals already queued are dropped. */
    @Override
    public void close() {
        generation.incrementAndGet();
        closeCurrent();
        queue.clear();
        closer.shutdown();
    }
}
