package io.watchfanout.bench.jmh;

import com.google.protobuf.ByteString;
import io.watchfanout.bench.BenchEvents;
import io.watchfanout.bench.NanosPerOperation;
import io.watchfanout.common.KeyRange;
import io.watchfanout.common.RangeIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Finding the watchers of one key among {@code ranges} watched ranges: the node's
 * {@link RangeIndex} (hash map of single keys plus an interval treap) against a naive scan of
 * every range, in the same run ({@code impl}), as ZooKeeper's {@code WatchBench} compares its
 * two watch managers. Half the ranges are prefixes (namespaces), half single keys; each looked-up
 * key matches one prefix and, for a quarter of the keys, one single key as well.
 */
public class RangeIndexBench extends NanosPerOperation {
    /** The lookup strategy. */
    public enum Impl {
        INDEX,
        SCAN
    }

    @Param({"10000"})
    public int ranges;

    @Param({"INDEX", "SCAN"})
    public Impl impl;

    private final RangeIndex<Integer> index = new RangeIndex<>();
    private final List<KeyRange> scanRanges = new ArrayList<>();
    private final List<Integer> scanValues = new ArrayList<>();
    private ByteString[] keys;
    private int next;

    @Setup
    public void setup() {
        int namespaces = ranges / 2;
        for (int i = 0; i < ranges; i++) {
            KeyRange r = i % 2 == 0
                    ? KeyRange.prefix(BenchEvents.key(String.format("/registry/pods/ns-%06d/", i / 2)))
                    : KeyRange.single(BenchEvents.key(String.format("/registry/pods/ns-%06d/pod-%d", i / 2, i % 7)));
            index.add(r, i);
            scanRanges.add(r);
            scanValues.add(i);
        }
        Random random = new Random(42);
        keys = new ByteString[4096];
        for (int i = 0; i < keys.length; i++) {
            int ns = random.nextInt(namespaces);
            keys[i] = BenchEvents.key(String.format("/registry/pods/ns-%06d/pod-%d", ns, random.nextInt(28)));
        }
    }

    @Benchmark
    public void lookup(Blackhole bh) {
        ByteString key = keys[next++ & (keys.length - 1)];
        Consumer<Integer> sink = bh::consume;
        if (impl == Impl.INDEX) {
            index.forEachMatching(key, sink);
        } else {
            for (int i = 0; i < scanRanges.size(); i++) {
                if (scanRanges.get(i).contains(key)) {
                    sink.accept(scanValues.get(i));
                }
            }
        }
    }
}
