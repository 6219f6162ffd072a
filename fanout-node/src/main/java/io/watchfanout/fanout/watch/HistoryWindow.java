package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.CachedEvent;
import java.util.Arrays;
import java.util.List;

/**
 * The recent events of the watch cache: a ring buffer in revision order, bounded by a
 * number of events and by age, searchable by revision (binary search). It always holds
 * whole revisions and every event with a revision after {@link #startRevision()}: a watch
 * from any revision {@code >= startRevision()} can be served from it. Mirrors the event
 * cache of Kubernetes' {@code watchCache} (its {@code cache}/{@code startIndex}/{@code endIndex}).
 *
 * <p>Not thread-safe: owned by {@link WatchCache}.
 */
final class HistoryWindow {
    private static final int INITIAL_CAPACITY = 1024;

    private final int maxEvents;
    private final long maxAgeMillis;
    private CachedEvent[] ring;
    private int head;
    private int size;
    private long startRevision;

    /**
     * @param maxEvents the number of events kept, {@code >= 1} (a single revision larger than
     *     this is still kept whole)
     * @param maxAgeMillis how long an event is kept after it entered the cache, {@code >= 1}
     */
    HistoryWindow(int maxEvents, long maxAgeMillis) {
        if (maxEvents < 1) {
            throw new IllegalArgumentException("maxEvents: " + maxEvents + " (expected: >= 1)");
        }
        if (maxAgeMillis < 1) {
            throw new IllegalArgumentException("maxAgeMillis: " + maxAgeMillis + " (expected: >= 1)");
        }
        this.maxEvents = maxEvents;
        this.maxAgeMillis = maxAgeMillis;
        this.ring = new CachedEvent[Math.min(INITIAL_CAPACITY, maxEvents)];
    }

    /** Events with a revision {@code <=} this are no longer (or never were) in the window. */
    long startRevision() {
        return startRevision;
    }

    int size() {
        return size;
    }

    /** The i-th event, 0 = oldest. */
    CachedEvent get(int i) {
        return ring[(head + i) % ring.length];
    }

    /** The revision of the oldest event held, or 0 when empty. */
    long oldestRevision() {
        return size == 0 ? 0 : get(0).revision();
    }

    /** Empties the window: it starts after {@code revision} (a resync, or the rebuild's start). */
    void reset(long revision, List<CachedEvent> evicted) {
        for (int i = 0; i < size; i++) {
            evicted.add(get(i));
        }
        Arrays.fill(ring, null);
        head = 0;
        size = 0;
        startRevision = revision;
    }

    /**
     * Appends the events of one complete revision, first evicting the oldest revisions that
     * would exceed the count bound.
     *
     * @param evicted receives the events removed from the window
     */
    void appendRevision(List<CachedEvent> events, List<CachedEvent> evicted) {
        while (size > 0 && size + events.size() > maxEvents) {
            evictOldestRevision(evicted);
        }
        if (size + events.size() > ring.length) {
            grow(size + events.size());
        }
        for (CachedEvent e : events) {
            ring[(head + size) % ring.length] = e;
            size++;
        }
    }

    /** Evicts the revisions that entered the cache more than maxAge before {@code nowMillis}. */
    void expire(long nowMillis, List<CachedEvent> evicted) {
        while (size > 0 && nowMillis - get(0).appendedAtMillis() > maxAgeMillis) {
            evictOldestRevision(evicted);
        }
    }

    private void evictOldestRevision(List<CachedEvent> evicted) {
        long revision = get(0).revision();
        while (size > 0 && get(0).revision() == revision) {
            evicted.add(ring[head]);
            ring[head] = null;
            head = (head + 1) % ring.length;
            size--;
        }
        startRevision = revision;
    }

    private void grow(int needed) {
        int capacity = ring.length;
        while (capacity < needed) {
            capacity = capacity > (Integer.MAX_VALUE >> 1) ? Integer.MAX_VALUE : capacity * 2;
        }
        capacity = Math.max(needed, Math.min(capacity, Math.max(maxEvents, needed)));
        CachedEvent[] next = new CachedEvent[capacity];
        for (int i = 0; i < size; i++) {
            next[i] = get(i);
        }
        ring = next;
        head = 0;
    }

    /** The index of the first event with a revision {@code > revision}, or {@link #size()}. */
    int firstAfter(long revision) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (get(mid).revision() <= revision) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
