package io.watchfanout.fanout.kafka;

import java.util.Arrays;

/**
 * A sparse index from revisions to offsets of the events topic, filled by the feed thread as it
 * tails the topic: every {@code spacing} offsets it notes where a revision starts. Kafka offsets
 * are not revisions (progress records, transaction markers and multi-event revisions take
 * offsets), so a read of older history asks this index where to start and falls back to a
 * bounded search of the topic ({@link EventsTopic#startOffset}) only for revisions before it.
 * Holds at most {@code capacity} entries; when full, every other entry is dropped, so the index
 * always covers everything the node has tailed at a spacing that doubles as it ages.
 *
 * <p>Thread-safe (synchronized; notes come once per {@code spacing} offsets).
 */
final class RevisionOffsets {
    private final int capacity;
    private long spacing;
    private long[] revisions;
    private long[] offsets;
    private int size;

    /**
     * @param spacing the least number of offsets between two entries, {@code >= 1}
     * @param capacity the most entries held, {@code >= 2}
     */
    RevisionOffsets(long spacing, int capacity) {
        if (spacing < 1 || capacity < 2) {
            throw new IllegalArgumentException("spacing " + spacing + ", capacity " + capacity);
        }
        this.spacing = spacing;
        this.capacity = capacity;
        this.revisions = new long[Math.min(capacity, 1024)];
        this.offsets = new long[revisions.length];
    }

    /**
     * Notes that the record at {@code offset} starts revision {@code revision}: every record before
     * it has a smaller revision. Offsets and revisions must come in ascending order; others are
     * ignored (a restarted read of the same span).
     */
    synchronized void note(long revision, long offset) {
        if (size > 0 && (offset < offsets[size - 1] + spacing || revision <= revisions[size - 1])) {
            return;
        }
        if (size == capacity) {
            int kept = 0;
            for (int i = 0; i < size; i += 2) {
                revisions[kept] = revisions[i];
                offsets[kept] = offsets[i];
                kept++;
            }
            size = kept;
            spacing *= 2;
        }
        if (size == revisions.length) {
            int next = Math.min(capacity, revisions.length * 2);
            revisions = Arrays.copyOf(revisions, next);
            offsets = Arrays.copyOf(offsets, next);
        }
        revisions[size] = revision;
        offsets[size] = offset;
        size++;
    }

    /**
     * An offset from which every event with a revision {@code > afterRevision} follows: the last
     * entry whose revision is at most {@code afterRevision + 1}, or -1 when the index starts after that.
     */
    synchronized long startOffset(long afterRevision) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (revisions[mid] <= afterRevision + 1) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo == 0 ? -1 : offsets[lo - 1];
    }

    /** Entries held, for tests. */
    synchronized int size() {
        return size;
    }
}
