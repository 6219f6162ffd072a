package io.watchfanout.fanout.watch;

import io.watchfanout.bench.BenchEvents;
import io.watchfanout.bench.NanosPerOperation;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.schema.v1.KeyValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * Finding a resume point in the history window: {@link HistoryWindow#firstAfter} (binary search
 * over the ring) for a random revision, with the window full at {@code events} events (the
 * node's default bound is 100,000); the ring has wrapped, so index arithmetic is exercised.
 */
public class HistorySearchBench extends NanosPerOperation {
    @Param({"1000", "100000"})
    public int events;

    private HistoryWindow window;
    private long[] probes;
    private int next;

    @Setup
    public void setup() {
        window = new HistoryWindow(events, Long.MAX_VALUE);
        KeyValue kv = BenchEvents.kv(BenchEvents.key("/k"), BenchEvents.value(16, 1), 1);
        List<CachedEvent> evicted = new ArrayList<>();
        long total = events + events / 3; // wrap the ring
        for (long rev = 1; rev <= total; rev++) {
            window.appendRevision(List.of(new CachedEvent(BenchEvents.put(kv, null, rev), 0)), evicted);
            evicted.clear();
        }
        Random random = new Random(7);
        probes = new long[4096];
        long oldest = window.oldestRevision();
        for (int i = 0; i < probes.length; i++) {
            probes[i] = oldest + random.nextInt(events);
        }
    }

    @Benchmark
    public int firstAfter() {
        return window.firstAfter(probes[next++ & (probes.length - 1)]);
    }
}
