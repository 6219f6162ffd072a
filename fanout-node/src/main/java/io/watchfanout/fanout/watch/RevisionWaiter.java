package io.watchfanout.fanout.watch;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A request waiting for the cache to reach a revision (a {@code resourceVersion} newer than
 * the node). Completes exactly once: either the revision was reached (or the node failed —
 * the callback checks), or {@link WatchCore#cancel} won the race (the caller answers 504).
 * Thread-safe.
 */
final class RevisionWaiter {
    final long revision;
    private final Runnable onReached;
    private final AtomicBoolean done = new AtomicBoolean();

    RevisionWaiter(long revision, Runnable onReached) {
        this.revision = revision;
        this.onReached = onReached;
    }

    /** Runs the callback unless already completed or cancelled. */
    void complete() {
        if (done.compareAndSet(false, true)) {
            onReached.run();
        }
    }

    /** @return true if this call cancelled it (the callback never runs) */
    boolean tryCancel() {
        return done.compareAndSet(false, true);
    }
}
