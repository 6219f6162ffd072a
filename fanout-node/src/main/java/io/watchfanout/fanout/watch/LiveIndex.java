package io.watchfanout.fanout.watch;

import io.watchfanout.common.RangeIndex;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.ObjectAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The live watchers, found by what an event can match (kube-apiserver's {@code watchersBuffer}
 * with its indexed triggers): watchers without an index value in a {@link RangeIndex} by key
 * range; a watcher registered under an index value ({@link WatchSpec#indexed}, e.g. a kubelet's
 * {@code spec.nodeName}) in that value's bucket only, so that an event visits the watchers of the
 * values its object carries before and after the change, not every watcher of its key range.
 *
 * <p>Not thread-safe: guarded by the dispatcher's lock.
 */
final class LiveIndex {
    private static final int MAX_INDEXES = 8;

    private final RangeIndex<Watcher> byRange = new RangeIndex<>();
    private final List<Map<String, Set<Watcher>>> byValue = new ArrayList<>(Collections.nCopies(MAX_INDEXES, null));

    private int indexCount;
    private int valueIndexed;
    private long valueVisits;

    /** Adds a watcher going live; a watcher already in is left as it is. */
    void add(Watcher w) {
        WatchSpec spec = w.spec;
        if (spec.indexValue() == null) {
            if (w.handle == null) {
                w.handle = byRange.add(spec.range(), w);
            }
            return;
        }
        if (w.inValueIndex) {
            return;
        }
        int i = spec.index();
        if (i >= MAX_INDEXES) {
            throw new IllegalArgumentException("index " + i + " (expected: < " + MAX_INDEXES + ")");
        }
        if (byValue.get(i) == null) {
            byValue.set(i, new HashMap<>());
            indexCount = Math.max(indexCount, i + 1);
        }
        byValue.get(i).computeIfAbsent(spec.indexValue(), v -> new HashSet<>()).add(w);
        w.inValueIndex = true;
        valueIndexed++;
    }

    /** Takes a watcher out of live dispatch; a watcher not in is ignored. */
    void remove(Watcher w) {
        if (w.handle != null) {
            byRange.remove(w.handle);
            w.handle = null;
        }
        if (w.inValueIndex) {
            Map<String, Set<Watcher>> buckets = byValue.get(w.spec.index());
            Set<Watcher> bucket = buckets.get(w.spec.indexValue());
            bucket.remove(w);
            if (bucket.isEmpty()) {
                buckets.remove(w.spec.indexValue());
            }
            w.inValueIndex = false;
            valueIndexed--;
        }
    }

    /** True while {@code w} is in live dispatch. */
    boolean contains(Watcher w) {
        return w.handle != null || w.inValueIndex;
    }

    /**
     * Calls {@code visitor} for every live watcher that {@code event} can match: those whose range
     * holds its key, and those indexed under a value its object carries after or before the
     * change (whose range holds the key). Each watcher at most once.
     */
    void forEachCandidate(CachedEvent event, Consumer<Watcher> visitor) {
        byRange.forEachMatching(event.key(), visitor);
        if (valueIndexed == 0) {
            return;
        }
        ObjectAttributes now = event.attributes();
        ObjectAttributes before = event.prevAttributes();
        for (int i = 0; i < indexCount; i++) {
            Map<String, Set<Watcher>> buckets = byValue.get(i);
            if (buckets == null || buckets.isEmpty()) {
                continue;
            }
            String a = now == null ? null : now.indexValue(i);
            String b = before == null ? null : before.indexValue(i);
            visitBucket(buckets, a, event, visitor);
            if (b != null && !b.equals(a)) {
                visitBucket(buckets, b, event, visitor);
            }
        }
    }

    private void visitBucket(
            Map<String, Set<Watcher>> buckets, String value, CachedEvent event, Consumer<Watcher> visitor) {
        if (value == null) {
            return;
        }
        Set<Watcher> bucket = buckets.get(value);
        if (bucket == null) {
            return;
        }
        for (Watcher w : bucket) {
            valueVisits++;
            if (w.spec.range().contains(event.key())) {
                visitor.accept(w);
            }
        }
    }

    /** Live watchers. */
    int size() {
        return byRange.size() + valueIndexed;
    }

    /** Watchers visited so far by events, by range and by index value. */
    long visits() {
        return byRange.visits() + valueVisits;
    }

    /** Watchers visited so far through index values. */
    long valueVisits() {
        return valueVisits;
    }

    /** Nodes of the range index examined so far. */
    long nodesExamined() {
        return byRange.nodesExamined();
    }
}
