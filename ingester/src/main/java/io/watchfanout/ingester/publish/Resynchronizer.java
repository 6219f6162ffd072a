package io.watchfanout.ingester.publish;

import com.google.protobuf.ByteString;
import io.watchfanout.ingester.etcd.EtcdSnapshot;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Resync;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the records of a resynchronisation: a {@link Resync} record at the snapshot's
 * revision followed by one entry per difference between the state published so far and
 * etcd's state at that revision — PUT for every key that is new or changed, DELETE for
 * every key that is gone. Publishing the differences (not a bare re-initialisation) is
 * what keeps keys deleted during an outage from lingering in the state topic.
 *
 * <p>Stateless and thread-safe.
 */
public final class Resynchronizer {
    private Resynchronizer() {}

    /**
     * @param published the state published so far, by key (empty for an initial load)
     * @param snapshot etcd's state of the range at one revision
     * @param reason why the resync happens
     * @param compactRevision etcd's compaction revision (reason COMPACTED), else 0
     * @param lastRecordRevision revision of the last record in the events topic (0 when none)
     * @return the records in topic order, all of them to be published in one transaction
     */
    public static List<KeyedRecord> records(
            Map<ByteString, KeyValue> published,
            EtcdSnapshot snapshot,
            Resync.Reason reason,
            long compactRevision,
            long lastRecordRevision) {
        long revision = snapshot.revision();
        List<Event.Builder> entries = new ArrayList<>();
        Map<ByteString, KeyValue> gone = new HashMap<>(published);
        for (KeyValue kv : snapshot.kvs()) {
            KeyValue before = gone.remove(kv.getKey());
            if (!kv.equals(before)) {
                Event.Builder e = Event.newBuilder().setType(Event.Type.PUT).setKv(kv);
                if (before != null) {
                    e.setPrevKv(before);
                }
                entries.add(e);
            }
        }
        gone.values().stream()
                .sorted((a, b) -> ByteString.unsignedLexicographicalComparator().compare(a.getKey(), b.getKey()))
                .forEach(before -> entries.add(Event.newBuilder()
                        .setType(Event.Type.DELETE)
                        .setKv(KeyValue.newBuilder().setKey(before.getKey()).setModRevision(revision))
                        .setPrevKv(before)));

        List<KeyedRecord> records = new ArrayList<>(entries.size() + 1);
        records.add(new KeyedRecord(
                new byte[0],
                EventsRecord.newBuilder()
                        .setResync(Resync.newBuilder()
                                .setRevision(revision)
                                .setPrevRevision(lastRecordRevision)
                                .setReason(reason)
                                .setEntryCount(entries.size())
                                .setCompactRevision(compactRevision))
                        .build(),
                revision));
        int index = 0;
        for (Event.Builder e : entries) {
            Event event = e.setRevision(revision)
                    .setIndex(index++)
                    .setCount(entries.size())
                    .setPrevRevision(revision)
                    .setResync(true)
                    .build();
            records.add(new KeyedRecord(
                    event.getKv().getKey().toByteArray(),
                    EventsRecord.newBuilder().setEvent(event).build(),
                    revision));
        }
        return records;
    }
}
