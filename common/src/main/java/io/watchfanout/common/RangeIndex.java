package io.watchfanout.common;

import com.google.protobuf.ByteString;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * Values indexed by key range, so that finding the values whose range holds a key costs
 * time in proportion to the matches, not to the number of values: values with the same range
 * share one entry (etcd's {@code watcherSetByKey} and watcher groups), single keys sit in a
 * hash map, and ranges and prefixes in an interval tree (a treap ordered by range start, each
 * node carrying the largest end of its subtree), as etcd's watcher groups use an interval tree.
 * So 1,000 watchers of one prefix cost one tree node and one walk of an array per key.
 *
 * <p>Counts values visited and tree nodes examined, so tests can prove the cost of a
 * dispatch without timing it.
 *
 * <p>Not thread-safe: the fan-out node's dispatcher guards it with its lock.
 *
 * @param <V> the indexed values
 */
public final class RangeIndex<V> {
    /** Where one added value sits, to remove it again ({@link #remove}); opaque to callers. */
    public static final class Handle<V> {
        final Entry<V> entry;
        final V value;
        /** Position in {@code entry.members}; -1 once removed. */
        int slot;

        Handle(Entry<V> entry, V value) {
            this.entry = entry;
            this.value = value;
        }
    }

    /** The values of one distinct range; for a range (not a single key) also a treap node. */
    static final class Entry<V> {
        final KeyRange range;
        final long seq;
        final int priority;

        @SuppressWarnings("unchecked")
        Handle<V>[] members = (Handle<V>[]) new Handle<?>[2];

        int count;
        Entry<V> left;
        Entry<V> right;
        /** Largest exclusive end in this subtree; null = unbounded. */
        ByteString maxEnd;

        Entry(KeyRange range, long seq) {
            this.range = range;
            this.seq = seq;
            this.priority = ThreadLocalRandom.current().nextInt();
            this.maxEnd = range.end();
        }

        void add(Handle<V> h) {
            if (count == members.length) {
                members = Arrays.copyOf(members, count * 2);
            }
            h.slot = count;
            members[count++] = h;
        }

        /** Swap-removes {@code h}; O(1). */
        void remove(Handle<V> h) {
            Handle<V> last = members[--count];
            members[h.slot] = last;
            last.slot = h.slot;
            members[count] = null;
            h.slot = -1;
        }
    }

    private final Map<KeyRange, Entry<V>> entries = new HashMap<>();
    private final Map<ByteString, Entry<V>> exact = new HashMap<>();
    private Entry<V> root;
    private long nextSeq;
    private int size;
    private long visits;
    private long nodesExamined;

    /** Adds {@code value} for {@code range} (a value may be added under several ranges); the handle removes it again. */
    public Handle<V> add(KeyRange range, V value) {
        Entry<V> e = entries.get(range);
        if (e == null) {
            e = new Entry<>(range, nextSeq++);
            entries.put(range, e);
            if (range.isSingleKey()) {
                exact.put(range.start(), e);
            } else {
                Entry<V>[] parts = split(root, range.start(), e.seq);
                root = merge(merge(parts[0], e), parts[1]);
            }
        }
        Handle<V> h = new Handle<>(e, value);
        e.add(h);
        size++;
        return h;
    }

    /** Removes what {@link #add} added; a handle removed twice is ignored. */
    public void remove(Handle<V> h) {
        if (h.slot < 0) {
            return;
        }
        Entry<V> e = h.entry;
        e.remove(h);
        size--;
        if (e.count > 0) {
            return;
        }
        entries.remove(e.range);
        if (e.range.isSingleKey()) {
            exact.remove(e.range.start());
            return;
        }
        Entry<V>[] lower = split(root, e.range.start(), e.seq);
        Entry<V>[] upper = split(lower[1], e.range.start(), e.seq + 1);
        root = merge(lower[0], upper[1]);
    }

    /** The number of values indexed. */
    public int size() {
        return size;
    }

    /** Distinct ranges indexed (values with the same range share one). */
    public int distinctRanges() {
        return entries.size();
    }

    /** Values handed to visitors so far. */
    public long visits() {
        return visits;
    }

    /** Interval-tree nodes looked at so far (including those that did not match). */
    public long nodesExamined() {
        return nodesExamined;
    }

    /**
     * Calls {@code visitor} once for every value whose range holds {@code key}: the values of the
     * key itself (one hash lookup), then of every range that contains it (a walk of the interval
     * tree that skips subtrees ending before the key). Cost: the matches plus O(log n) nodes.
     */
    public void forEachMatching(ByteString key, Consumer<? super V> visitor) {
        Entry<V> e = exact.get(key);
        if (e != null) {
            visitAll(e, visitor);
        }
        stab(root, key, visitor);
    }

    private void visitAll(Entry<V> e, Consumer<? super V> visitor) {
        Handle<V>[] members = e.members;
        int n = e.count;
        visits += n;
        for (int i = 0; i < n; i++) {
            visitor.accept(members[i].value);
        }
    }

    private void stab(Entry<V> node, ByteString key, Consumer<? super V> visitor) {
        while (node != null) {
            nodesExamined++;
            if (!endsAfter(node.maxEnd, key)) {
                return; // every range in this subtree ends at or before key
            }
            stab(node.left, key, visitor);
            if (KeyRange.KEY_ORDER.compare(node.range.start(), key) > 0) {
                return; // this node and its right subtree start after key
            }
            if (endsAfter(node.range.end(), key)) {
                visitAll(node, visitor);
            }
            node = node.right;
        }
    }

    private static boolean endsAfter(ByteString end, ByteString key) {
        return end == null || KeyRange.KEY_ORDER.compare(key, end) < 0;
    }

    private static <V> int compare(Entry<V> e, ByteString start, long seq) {
        int c = KeyRange.KEY_ORDER.compare(e.range.start(), start);
        return c != 0 ? c : Long.compare(e.seq, seq);
    }

    /** Splits into nodes ordered before (start, seq) and the rest. */
    @SuppressWarnings("unchecked")
    private Entry<V>[] split(Entry<V> node, ByteString start, long seq) {
        if (node == null) {
            return (Entry<V>[]) new Entry<?>[] {null, null};
        }
        if (compare(node, start, seq) < 0) {
            Entry<V>[] parts = split(node.right, start, seq);
            node.right = parts[0];
            update(node);
            parts[0] = node;
            return parts;
        }
        Entry<V>[] parts = split(node.left, start, seq);
        node.left = parts[1];
        update(node);
        parts[1] = node;
        return parts;
    }

    private Entry<V> merge(Entry<V> a, Entry<V> b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        if (a.priority > b.priority) {
            a.right = merge(a.right, b);
            update(a);
            return a;
        }
        b.left = merge(a, b.left);
        update(b);
        return b;
    }

    private static <V> void update(Entry<V> n) {
        ByteString max = n.range.end();
        max = maxEnd(max, n.left);
        max = maxEnd(max, n.right);
        n.maxEnd = max;
    }

    private static <V> ByteString maxEnd(ByteString end, Entry<V> child) {
        if (child == null) {
            return end;
        }
        if (end == null || child.maxEnd == null) {
            return null;
        }
        return KeyRange.KEY_ORDER.compare(child.maxEnd, end) > 0 ? child.maxEnd : end;
    }
}
