package io.watchfanout.fanout.security;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The union of key ranges a rule set grants, merged into sorted disjoint intervals, and the
 * question whether it covers a whole requested range, as etcd's {@code checkKeyInterval} asks
 * it of a user's merged permissions: a request is allowed only when one merged interval holds
 * all of it (two adjacent grants together cover a range that spans both).
 *
 * <p>Immutable and thread-safe.
 */
final class RangeCover {
    static final RangeCover NONE = new RangeCover(List.of());

    /** Start inclusive, end exclusive (null = unbounded), sorted by start, disjoint and not adjacent. */
    private final List<ByteString[]> intervals;

    private RangeCover(List<ByteString[]> intervals) {
        this.intervals = intervals;
    }

    /** The union of {@code ranges}. */
    static RangeCover of(List<KeyRange> ranges) {
        List<ByteString[]> sorted = new ArrayList<>();
        for (KeyRange r : ranges) {
            sorted.add(new ByteString[] {r.start(), r.end()});
        }
        sorted.sort(Comparator.comparing(i -> i[0], KeyRange.KEY_ORDER));
        List<ByteString[]> merged = new ArrayList<>();
        for (ByteString[] i : sorted) {
            ByteString[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && (last[1] == null || KeyRange.compareKeys(i[0], last[1]) <= 0)) {
                if (last[1] != null && (i[1] == null || KeyRange.compareKeys(i[1], last[1]) > 0)) {
                    last[1] = i[1];
                }
            } else {
                merged.add(new ByteString[] {i[0], i[1]});
            }
        }
        return new RangeCover(List.copyOf(merged));
    }

    /** True when every key of {@code range} lies in the union. */
    boolean covers(KeyRange range) {
        ByteString start = range.start();
        ByteString end = range.end();
        for (ByteString[] i : intervals) {
            if (KeyRange.compareKeys(i[0], start) > 0) {
                return false;
            }
            boolean startInside = i[1] == null || KeyRange.compareKeys(start, i[1]) < 0;
            if (startInside) {
                return i[1] == null || (end != null && KeyRange.compareKeys(end, i[1]) <= 0);
            }
        }
        return false;
    }

    boolean isEmpty() {
        return intervals.isEmpty();
    }
}
