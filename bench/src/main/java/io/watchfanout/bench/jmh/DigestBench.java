package io.watchfanout.bench.jmh;

import io.watchfanout.bench.BenchEvents;
import io.watchfanout.bench.NanosPerOperation;
import io.watchfanout.schema.DigestVerifier;
import io.watchfanout.schema.StateHash;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * What digests cost a fan-out node per event: {@link StateHash#entryHash} of one key-value
 * ({@code valueBytes} value, a pod-sized key), and {@link DigestVerifier#accept} of an update
 * event (the hash of the new key-value and of the one before it, and the revision's change kept)
 * — the work the feed thread adds per event with digests on.
 */
public class DigestBench extends NanosPerOperation {
    @Param({"1024", "4096"})
    public int valueBytes;

    private KeyValue kv;
    private EventsRecord[] updates;
    private DigestVerifier verifier;
    private int next;

    @Setup
    public void setup() {
        KeyValue prev = BenchEvents.kv(
                BenchEvents.key("/registry/pods/default/web-7f9c-00042"), BenchEvents.value(valueBytes, 1), 99);
        kv = BenchEvents.kv(prev.getKey(), BenchEvents.value(valueBytes, 2), 100);
        updates = new EventsRecord[1024];
        KeyValue before = prev;
        for (int i = 0; i < updates.length; i++) {
            KeyValue after = BenchEvents.kv(prev.getKey(), BenchEvents.value(valueBytes, 3 + i), 100 + i);
            Event e = BenchEvents.put(after, before, 100 + i);
            updates[i] = EventsRecord.newBuilder().setEvent(e).build();
            before = after;
        }
        verifier = new DigestVerifier(200_000);
    }

    /** The hash of one key-value. */
    @Benchmark
    public long entryHash() {
        return StateHash.entryHash(kv);
    }

    /** One update event through the node's digest check (two entry hashes and a revision's change). */
    @Benchmark
    public long verifierAcceptsAnUpdate() {
        verifier.accept(updates[next++ & (updates.length - 1)]);
        return next;
    }
}
