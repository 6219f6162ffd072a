package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.cache.KeyRange;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * Values indexed by key range, so that finding the values whose range holds a key costs
 * time in proportion to the matches, not to the number of values: single keys in a hash
 * map, ranges and prefixes in an interval tree (a treap ordered by range start, each node
 * carrying the largest end of its subtree), as etcd's watcher groups use an interval tree.
 *
 * <p>Counts values visited and tree nodes examined, so tests can prove the cost of a
 * dispatch without timing it.
 *
 * <p>Not thread-safe: {@link WatchHub} guards it with its lock.
 *
 * @param <V> the indexed values
 */
final class RangeIndex<V> {
  /** Where one added value sits, to remove it again. */
  static final class Handle<V> {
    final KeyRange range;
    final V value;
    final long seq;
    final int priority;
    Handle<V> left;
    Handle<V> right;
    /** Largest exclusive end in this subtree; null = unbounded. */
    ByteString maxEnd;

    Handle(KeyRange range, V value, long seq) {
      this.range = range;
      this.value = value;
      this.seq = seq;
      this.priority = ThreadLocalRandom.current().nextInt();
    }
  }

  private final Map<ByteString, Set<V>> exact = new HashMap<>();
  private Handle<V> root;
  private long nextSeq;
  private int size;
  private long visits;
  private long nodesExamined;

  /** Adds {@code value} for {@code range}; the handle removes it again. */
  Handle<V> add(KeyRange range, V value) {
    Handle<V> h = new Handle<>(range, value, nextSeq++);
    if (range.isSingleKey()) {
      exact.computeIfAbsent(range.start(), k -> Collections.newSetFromMap(new IdentityHashMap<>()))
          .add(value);
    } else {
      h.maxEnd = range.end();
      Handle<V>[] parts = split(root, h.range.start(), h.seq);
      root = merge(merge(parts[0], h), parts[1]);
    }
    size++;
    return h;
  }

  /** Removes what {@link #add} added; a handle removed twice is ignored. */
  void remove(Handle<V> h) {
    if (h.range.isSingleKey()) {
      Set<V> set = exact.get(h.range.start());
      if (set != null && set.remove(h.value)) {
        size--;
        if (set.isEmpty()) {
          exact.remove(h.range.start());
        }
      }
      return;
    }
    Handle<V>[] lower = split(root, h.range.start(), h.seq);
    Handle<V>[] upper = split(lower[1], h.range.start(), h.seq + 1);
    if (upper[0] == h) {
      size--;
      root = merge(lower[0], upper[1]);
    } else {
      root = merge(lower[0], merge(upper[0], upper[1]));
    }
  }

  /** The number of values indexed. */
  int size() {
    return size;
  }

  /** Values handed to visitors so far. */
  long visits() {
    return visits;
  }

  /** Interval-tree nodes looked at so far (including those that did not match). */
  long nodesExamined() {
    return nodesExamined;
  }

  /** Calls {@code visitor} once for every value whose range holds {@code key}. */
  void forEachMatching(ByteString key, Consumer<? super V> visitor) {
    Set<V> set = exact.get(key);
    if (set != null) {
      for (V v : set) {
        visits++;
        visitor.accept(v);
      }
    }
    stab(root, key, visitor);
  }

  private void stab(Handle<V> node, ByteString key, Consumer<? super V> visitor) {
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
        visits++;
        visitor.accept(node.value);
      }
      node = node.right;
    }
  }

  private static boolean endsAfter(ByteString end, ByteString key) {
    return end == null || KeyRange.KEY_ORDER.compare(key, end) < 0;
  }

  private static <V> int compare(Handle<V> h, ByteString start, long seq) {
    int c = KeyRange.KEY_ORDER.compare(h.range.start(), start);
    return c != 0 ? c : Long.compare(h.seq, seq);
  }

  /** Splits into nodes ordered before (start, seq) and the rest. */
  @SuppressWarnings("unchecked")
  private Handle<V>[] split(Handle<V> node, ByteString start, long seq) {
    if (node == null) {
      return (Handle<V>[]) new Handle<?>[] {null, null};
    }
    if (compare(node, start, seq) < 0) {
      Handle<V>[] parts = split(node.right, start, seq);
      node.right = parts[0];
      update(node);
      parts[0] = node;
      return parts;
    }
    Handle<V>[] parts = split(node.left, start, seq);
    node.left = parts[1];
    update(node);
    parts[1] = node;
    return parts;
  }

  private Handle<V> merge(Handle<V> a, Handle<V> b) {
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

  private static <V> void update(Handle<V> n) {
    ByteString max = n.range.end();
    max = maxEnd(max, n.left);
    max = maxEnd(max, n.right);
    n.maxEnd = max;
  }

  private static <V> ByteString maxEnd(ByteString end, Handle<V> child) {
    if (child == null) {
      return end;
    }
    if (end == null || child.maxEnd == null) {
      return null;
    }
    return KeyRange.KEY_ORDER.compare(child.maxEnd, end) > 0 ? child.maxEnd : end;
  }
}
