package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.Encoding;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every open watcher of the node, live or not, from its opening until its transport closes it:
 * what resyncs, failures and shutdown end, what the bookmark timer visits and what the metrics
 * count. Thread-safe (a concurrent set); opening registers under the dispatcher's lock, so that a
 * resync's snapshot holds exactly the watchers opened before it.
 */
final class Watchers {
    private final Set<Watcher> open = ConcurrentHashMap.newKeySet();

    void add(Watcher w) {
        open.add(w);
    }

    void remove(Watcher w) {
        open.remove(w);
    }

    /** A snapshot of the open watchers. */
    List<Watcher> snapshot() {
        return List.copyOf(open);
    }

    /** The open watchers, weakly consistent (for iteration without a copy). */
    Iterable<Watcher> all() {
        return open;
    }

    int count() {
        return open.size();
    }

    long count(Encoding encoding) {
        long n = 0;
        for (Watcher w : open) {
            if (w.encoding() == encoding) {
                n++;
            }
        }
        return n;
    }

    /** Frames waiting in the watchers' queues (each bounded by its queue size plus one revision). */
    long queuedFrames() {
        long n = 0;
        for (Watcher w : open) {
            n += w.queued();
        }
        return n;
    }
}
