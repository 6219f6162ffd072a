package io.watchfanout.fanout.read;

import io.watchfanout.fanout.watch.Arrival;
import io.watchfanout.fanout.watch.CurrentRevision;
import io.watchfanout.fanout.watch.WatchCore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Where a read waits for the revision it must be answered at, for every front end: a
 * resourceVersion ahead of the node ({@link #await}), and a consistent read (Kubernetes' "most
 * recent", KEP-2340; etcd's linearizable range) that first learns etcd's current revision, then
 * waits for the cache to get there ({@link #awaitConsistent()}), as kube-apiserver's cacher does.
 * Each wait lasts at most the node's resource-version wait; the wait itself is the core's one entry
 * ({@link WatchCore#awaitRevision(long, Duration, Executor, Consumer)}). Front ends turn the
 * outcomes into their own answers (504, 503; etcd's forwarding).
 *
 * <p>Thread-safe.
 */
public final class RevisionWait {
    private final WatchCore core;
    private final Duration wait;
    /** etcd's current revision, or null (then a consistent read is at the node's revision). */
    private final CurrentRevision currentRevision;

    /**
     * @param wait the longest wait, for etcd's answer and for the cache each
     * @param currentRevision where etcd's current revision is learned, or null without an etcd
     *     endpoint
     */
    public RevisionWait(WatchCore core, Duration wait, CurrentRevision currentRevision) {
        this.core = core;
        this.wait = wait;
        this.currentRevision = currentRevision;
    }

    /**
     * The outcome of a consistent read's wait.
     *
     * @param unlearned why etcd's revision could not be learned (then {@code arrival} is null),
     *     or null
     * @param revision etcd's revision waited for, 0 when not learned
     * @param arrival the cache's arrival at etcd's revision, or null when unlearned (or without an
     *     etcd endpoint)
     */
    public record Consistent(Throwable unlearned, long revision, Arrival arrival) {
        /** The outcome without an etcd endpoint: at the node's revision. */
        static final Consistent AT_NODE = new Consistent(null, 0, null);

        /** Whether the cache is at etcd's revision (or there is no etcd to ask). */
        public boolean reached() {
            return unlearned == null && (arrival == null || arrival.reached());
        }
    }

    /** Whether consistent reads learn etcd's revision (there is an etcd endpoint). */
    public boolean knowsEtcd() {
        return currentRevision != null;
    }

    /**
     * Blocks the calling worker thread until the cache's revision is {@code >= rv}, at most the wait.
     *
     * @throws InterruptedException if interrupted meanwhile (the wait is cancelled)
     */
    public Arrival await(long rv) throws InterruptedException {
        return core.awaitRevision(rv, wait);
    }

    /**
     * Blocks the calling worker thread until the cache is at etcd's current revision or later:
     * {@link Consistent#AT_NODE} at once without an etcd endpoint.
     *
     * @throws InterruptedException if interrupted meanwhile
     */
    public Consistent awaitConsistent() throws InterruptedException {
        if (currentRevision == null) {
            return Consistent.AT_NODE;
        }
        long etcd;
        try {
            etcd = currentRevision.current().get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return new Consistent(e.getCause() != null ? e.getCause() : e, 0, null);
        }
        return new Consistent(null, etcd, core.awaitRevision(etcd, wait));
    }

    /**
     * As {@link #awaitConsistent()} without blocking, with etcd's revision as {@code learned}
     * learns it (a caller's own probe of etcd); {@code done} runs once, on {@code executor} after
     * a wait.
     */
    public void awaitConsistent(CompletableFuture<Long> learned, Executor executor, Consumer<Consistent> done) {
        learned.whenComplete((revision, failure) -> {
            if (failure != null) {
                done.accept(new Consistent(
                        failure instanceof CompletionException && failure.getCause() != null
                                ? failure.getCause()
                                : failure,
                        0,
                        null));
                return;
            }
            core.awaitRevision(
                    revision, wait, executor, arrival -> done.accept(new Consistent(null, revision, arrival)));
        });
    }
}
