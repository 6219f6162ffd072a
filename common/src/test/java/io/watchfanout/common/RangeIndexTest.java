package io.watchfanout.common;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The optimized index against a brute-force scan, and its cost counted (not timed). */
class RangeIndexTest {
    @Test
    void tenThousandDisjointExactKeysVisitOnlyTheMatch() {
        RangeIndex<Integer> index = new RangeIndex<>();
        for (int i = 0; i < 10_000; i++) {
            index.add(KeyRange.single(key("/pods/" + i)), i);
        }
        List<Integer> hit = new ArrayList<>();
        index.forEachMatching(key("/pods/4711"), hit::add);
        assertThat(hit).containsExactly(4711);
        assertThat(index.visits()).isEqualTo(1);
        assertThat(index.nodesExamined()).isZero();
    }

    @Test
    void tenThousandDisjointPrefixesVisitOnlyTheMatchAndLogarithmicallyManyNodes() {
        RangeIndex<Integer> index = new RangeIndex<>();
        for (int i = 0; i < 10_000; i++) {
            index.add(KeyRange.prefix(key(String.format("/ns/%05d/", i))), i);
        }
        List<Integer> hit = new ArrayList<>();
        index.forEachMatching(key("/ns/04711/pod-a"), hit::add);
        assertThat(hit).containsExactly(4711);
        assertThat(index.visits()).isEqualTo(1);
        // A treap of 10,000 nodes is ~30-40 deep; a stabbing query examines O(depth) nodes, not 10,000.
        assertThat(index.nodesExamined()).isLessThan(200);
    }

    @Test
    void aThousandWatchersOfOnePrefixShareOneTreeNode() {
        RangeIndex<Integer> index = new RangeIndex<>();
        List<RangeIndex.Handle<Integer>> handles = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            handles.add(index.add(KeyRange.prefix(key("/registry/pods/")), i));
            index.add(KeyRange.single(key("/registry/pods/a")), 10_000 + i);
        }
        assertThat(index.distinctRanges()).isEqualTo(2);
        List<Integer> hit = new ArrayList<>();
        index.forEachMatching(key("/registry/pods/b"), hit::add);
        assertThat(hit).hasSize(1000);
        assertThat(index.nodesExamined())
                .as("one node for the 1,000 identical prefixes")
                .isEqualTo(1);
        for (int i = 0; i < 1000; i += 2) {
            index.remove(handles.get(i));
        }
        hit.clear();
        index.forEachMatching(key("/registry/pods/a"), hit::add);
        assertThat(hit).hasSize(1500).doesNotContain(0, 2, 998).contains(1, 999, 10_000, 10_999);
        for (int i = 1; i < 1000; i += 2) {
            index.remove(handles.get(i));
        }
        assertThat(index.distinctRanges()).isEqualTo(1);
        assertThat(index.size()).isEqualTo(1000);
    }

    @Test
    void overlappingRangesPrefixesAndKeysMatchABruteForceScan() {
        Random random = new Random(7);
        RangeIndex<Integer> index = new RangeIndex<>();
        List<KeyRange> ranges = new ArrayList<>();
        List<RangeIndex.Handle<Integer>> handles = new ArrayList<>();
        Set<Integer> removed = new HashSet<>();
        for (int i = 0; i < 2000; i++) {
            KeyRange r = randomRange(random);
            ranges.add(r);
            handles.add(index.add(r, i));
            if (random.nextInt(4) == 0) {
                int victim = random.nextInt(i + 1);
                if (removed.add(victim)) {
                    index.remove(handles.get(victim));
                }
            }
        }
        assertThat(index.size()).isEqualTo(2000 - removed.size());
        for (int q = 0; q < 2000; q++) {
            ByteString k = randomKey(random);
            List<Integer> got = new ArrayList<>();
            index.forEachMatching(k, got::add);
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < ranges.size(); i++) {
                if (!removed.contains(i) && ranges.get(i).contains(k)) {
                    expected.add(i);
                }
            }
            assertThat(got).as("key %s", k.toStringUtf8()).containsExactlyInAnyOrderElementsOf(expected);
        }
    }

    @Test
    void removingTwiceAndIdenticalRangesAreFine() {
        RangeIndex<String> index = new RangeIndex<>();
        RangeIndex.Handle<String> a = index.add(KeyRange.prefix(key("/x")), "a");
        index.add(KeyRange.prefix(key("/x")), "b");
        RangeIndex.Handle<String> c = index.add(KeyRange.single(key("/x1")), "c");
        index.add(KeyRange.all(), "d");
        index.remove(a);
        index.remove(a);
        index.remove(c);
        List<String> got = new ArrayList<>();
        index.forEachMatching(key("/x1"), got::add);
        assertThat(got).containsExactlyInAnyOrder("b", "d");
        assertThat(index.size()).isEqualTo(2);
    }

    private static ByteString randomKey(Random r) {
        byte[] b = new byte[1 + r.nextInt(3)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (r.nextBoolean() ? 'a' + r.nextInt(4) : r.nextInt(256));
        }
        return ByteString.copyFrom(b);
    }

    private static KeyRange randomRange(Random r) {
        switch (r.nextInt(4)) {
            case 0:
                return KeyRange.single(randomKey(r));
            case 1:
                return KeyRange.prefix(r.nextInt(20) == 0 ? ByteString.EMPTY : randomKey(r));
            case 2:
                return KeyRange.of(randomKey(r), ByteString.copyFrom(new byte[] {0}));
            default:
                ByteString a = randomKey(r);
                ByteString b = randomKey(r);
                int cmp = KeyRange.KEY_ORDER.compare(a, b);
                if (cmp == 0) {
                    return KeyRange.single(a);
                }
                return cmp < 0 ? KeyRange.of(a, b) : KeyRange.of(b, a);
        }
    }

    private static ByteString key(String s) {
        return ByteString.copyFrom(s, StandardCharsets.UTF_8);
    }
}
