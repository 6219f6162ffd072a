package io.watchfanout.fanout.watch;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Requests waiting for the cache to reach a revision, soonest first. Guarded by the dispatcher's
 * lock: the feed thread takes the due ones after each revision under it and runs them after
 * releasing it ({@link #run}), so that no callback runs under the lock.
 */
final class RevisionWaiters {
    private final PriorityQueue<RevisionWaiter> waiting =
            new PriorityQueue<>((a, b) -> Long.compare(a.revision, b.revision));

    void addLocked(RevisionWaiter w) {
        waiting.add(w);
    }

    void removeLocked(RevisionWaiter w) {
        waiting.remove(w);
    }

    /** Takes the waiters whose revision is at most {@code revision}. */
    List<RevisionWaiter> dueLocked(long revision) {
        List<RevisionWaiter> due = null;
        while (!waiting.isEmpty() && waiting.peek().revision <= revision) {
            if (due == null) {
                due = new ArrayList<>();
            }
            due.add(waiting.poll());
        }
        return due == null ? List.of() : due;
    }

    /** Takes every waiter (the node failed: each callback finds out). */
    List<RevisionWaiter> allLocked() {
        List<RevisionWaiter> all = new ArrayList<>(waiting);
        waiting.clear();
        return all;
    }

    /** Completes {@code due}, outside the lock. */
    static void run(List<RevisionWaiter> due) {
        for (RevisionWaiter w : due) {
            w.complete();
        }
    }
}
