package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * Events shaped like the benchmark load: a Kubernetes-style key and a value of printable bytes
 * (1 KiB by default), a MODIFIED with its previous key-value, as the ingester publishes them.
 */
public final class BenchEvents {
    private BenchEvents() {}

    /** {@code size} printable ASCII bytes from a fixed seed (what the load generator writes, minus its timestamp). */
    public static ByteString value(int size, long seed) {
        Random r = new Random(seed);
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) ('a' + r.nextInt(26));
        }
        return ByteString.copyFrom(b);
    }

    /** A key as UTF-8 bytes. */
    public static ByteString key(String key) {
        return ByteString.copyFrom(key, StandardCharsets.UTF_8);
    }

    /** A key-value at {@code revision}, version 2 (so its frame is MODIFIED). */
    public static KeyValue kv(ByteString key, ByteString value, long revision) {
        return KeyValue.newBuilder()
                .setKey(key)
                .setValue(value)
                .setCreateRevision(1)
                .setModRevision(revision)
                .setVersion(2)
                .build();
    }

    /** A single-event revision: PUT of {@code kv} with {@code prevKv} as its previous value. */
    public static Event put(KeyValue kv, KeyValue prevKv, long revision) {
        Event.Builder b = Event.newBuilder()
                .setType(Event.Type.PUT)
                .setKv(kv)
                .setRevision(revision)
                .setIndex(0)
                .setCount(1)
                .setPrevRevision(revision - 1);
        if (prevKv != null) {
            b.setPrevKv(prevKv);
        }
        return b.build();
    }
}
