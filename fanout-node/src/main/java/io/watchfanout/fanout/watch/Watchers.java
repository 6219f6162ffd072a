package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.Encoding;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every open watcher of the node, live or not, from its opening until its transport closes it:
 * what resyncs, failures and shutdown end, what the bookmark timer visits and what the metrics
 * count. Thread-safe (a concurrent set); opening registers under the dispatcher's lock, so that a
 * resync's snapshot holds exactly the watchers opened before it.
 */
final class Watchers {
    private final Set<Watcher> open = ConcurrentHashMap.newKeySet();
    /** Open watchers that read events' attributes ({@link WatchSpec#readsAttributes()}). */
    private final AtomicInteger readingAttributes = new AtomicInteger();

    void add(Watcher w) {
        if (open.add(w) && w.spec.readsAttributes()) {
            readingAttributes.incrementAndGet();
        }
    }

    void remove(Watcher w) {
        if (open.remove(w) && w.spec.readsAttributes()) {
            readingAttributes.decrementAndGet();
        }
    }

    /**
     * True while an open watcher selects by attributes or is indexed: then the feed thread
     * computes each event's attributes before dispatch (else they are left to first need).
     */
    boolean anyReadsAttributes() {
        return readingAttributes.get() > 0;
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
