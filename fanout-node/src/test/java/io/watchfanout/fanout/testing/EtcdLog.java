package io.watchfanout.fanout.testing;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.StateDigestBuilder;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.Resync;
import io.watchfanout.schema.v1.StateDigest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A tiny etcd model for tests: keeps the key-values, assigns revisions, and produces the
 * events-topic records the ingester would publish (with prev_revision, index/count, prev_kv).
 */
public final class EtcdLog {
    private final TreeMap<ByteString, KeyValue> kvs = new TreeMap<>(ByteString.unsignedLexicographicalComparator());
    private long revision;
    private long lastPublished;

    /** Starts at revision {@code start} (the previous record's revision is {@code start}). */
    public EtcdLog(long start) {
        this.revision = start;
        this.lastPublished = start;
    }

    public static ByteString key(String s) {
        return ByteString.copyFrom(s, StandardCharsets.UTF_8);
    }

    public long revision() {
        return revision;
    }

    public Map<ByteString, KeyValue> state() {
        return new LinkedHashMap<>(kvs);
    }

    /** One operation of a transaction. */
    public record Op(String key, String value) {
        /** A delete when value is null. */
        public static Op put(String key, String value) {
            return new Op(key, value);
        }

        public static Op delete(String key) {
            return new Op(key, null);
        }
    }

    public List<EventsRecord> put(String key, String value) {
        return txn(Op.put(key, value));
    }

    public List<EventsRecord> delete(String key) {
        return txn(Op.delete(key));
    }

    /** One revision with the given operations (deletes of missing keys are dropped, like etcd). */
    /** A put of a key given as bytes (keys need not be UTF-8). */
    public List<EventsRecord> putBytes(ByteString key, String value) {
        return txn(List.of(Map.entry(key, ByteString.copyFromUtf8(value))));
    }

    /** A put of a value given as bytes (kube-apiserver's protobuf envelopes are not UTF-8). */
    public List<EventsRecord> put(String key, byte[] value) {
        return txn(List.of(Map.entry(key(key), ByteString.copyFrom(value))));
    }

    public List<EventsRecord> txn(Op... ops) {
        List<Map.Entry<ByteString, ByteString>> byKey = new ArrayList<>();
        for (Op op : ops) {
            byKey.add(new java.util.AbstractMap.SimpleEntry<>(
                    key(op.key()), op.value() == null ? null : ByteString.copyFromUtf8(op.value())));
        }
        return txn(byKey);
    }

    /** A transaction of (key, value) puts, a null value being a delete. */
    private List<EventsRecord> txn(List<Map.Entry<ByteString, ByteString>> ops) {
        long rev = revision + 1;
        List<Event> events = new ArrayList<>();
        for (Map.Entry<ByteString, ByteString> op : ops) {
            ByteString k = op.getKey();
            KeyValue prev = kvs.get(k);
            Event.Builder e = Event.newBuilder().setRevision(rev);
            ByteString value = op.getValue();
            if (value == null) {
                if (prev == null) {
                    continue;
                }
                kvs.remove(k);
                e.setType(Event.Type.DELETE)
                        .setKv(KeyValue.newBuilder().setKey(k).setModRevision(rev))
                        .setPrevKv(prev);
            } else {
                KeyValue kv = KeyValue.newBuilder()
                        .setKey(k)
                        .setValue(value)
                        .setCreateRevision(prev == null ? rev : prev.getCreateRevision())
                        .setModRevision(rev)
                        .setVersion(prev == null ? 1 : prev.getVersion() + 1)
                        .build();
                kvs.put(k, kv);
                e.setType(Event.Type.PUT).setKv(kv);
                if (prev != null) {
                    e.setPrevKv(prev);
                }
            }
            events.add(e.build());
        }
        revision = rev;
        List<EventsRecord> out = new ArrayList<>();
        if (events.isEmpty()) {
            return out;
        }
        for (int i = 0; i < events.size(); i++) {
            out.add(EventsRecord.newBuilder()
                    .setEvent(events.get(i).toBuilder()
                            .setIndex(i)
                            .setCount(events.size())
                            .setPrevRevision(i == 0 ? lastPublished : rev))
                    .build());
        }
        lastPublished = rev;
        return out;
    }

    /** A write outside the watched range: a progress record at the next revision. */
    public EventsRecord progress() {
        revision++;
        EventsRecord r = EventsRecord.newBuilder()
                .setProgress(Progress.newBuilder().setRevision(revision).setPrevRevision(lastPublished))
                .build();
        lastPublished = revision;
        return r;
    }

    /**
     * A progress record at the next revision carrying the digest of the state as it was at
     * {@code digest.revision} (taken earlier with {@link #digestNow}), as the ingester publishes one.
     */
    public EventsRecord progressWithDigest(StateDigest digest) {
        EventsRecord p = progress();
        return p.toBuilder()
                .setProgress(p.getProgress().toBuilder().setDigest(digest))
                .build();
    }

    /** The digest of the state at the current revision, as the ingester reads it from etcd. */
    public StateDigest digestNow(int keysPerRange) {
        StateDigestBuilder b = new StateDigestBuilder(Math.max(1, revision), keysPerRange);
        kvs.values().forEach(b::add);
        return b.build();
    }

    /** A resync at the next revision replacing the state by {@code newState} (PUT/DELETE diffs). */
    public List<EventsRecord> resync(Map<String, String> newState) {
        long rev = revision + 1;
        List<Event> entries = new ArrayList<>();
        TreeMap<ByteString, KeyValue> next = new TreeMap<>(kvs.comparator());
        for (Map.Entry<String, String> e : newState.entrySet()) {
            ByteString k = key(e.getKey());
            KeyValue kv = KeyValue.newBuilder()
                    .setKey(k)
                    .setValue(ByteString.copyFromUtf8(e.getValue()))
                    .setCreateRevision(rev)
                    .setModRevision(rev)
                    .setVersion(1)
                    .build();
            next.put(k, kv);
            entries.add(Event.newBuilder()
                    .setType(Event.Type.PUT)
                    .setKv(kv)
                    .setRevision(rev)
                    .setResync(true)
                    .build());
        }
        for (ByteString k : kvs.keySet()) {
            if (!next.containsKey(k)) {
                entries.add(Event.newBuilder()
                        .setType(Event.Type.DELETE)
                        .setKv(KeyValue.newBuilder().setKey(k).setModRevision(rev))
                        .setRevision(rev)
                        .setResync(true)
                        .build());
            }
        }
        List<EventsRecord> out = new ArrayList<>();
        out.add(EventsRecord.newBuilder()
                .setResync(Resync.newBuilder()
                        .setRevision(rev)
                        .setPrevRevision(lastPublished)
                        .setEntryCount(entries.size())
                        .setReason(Resync.Reason.COMPACTED))
                .build());
        for (int i = 0; i < entries.size(); i++) {
            out.add(EventsRecord.newBuilder()
                    .setEvent(entries.get(i).toBuilder()
                            .setIndex(i)
                            .setCount(entries.size())
                            .setPrevRevision(rev))
                    .build());
        }
        kvs.clear();
        kvs.putAll(next);
        revision = rev;
        lastPublished = rev;
        return out;
    }
}
