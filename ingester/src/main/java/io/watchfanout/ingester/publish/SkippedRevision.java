package io.watchfanout.ingester.publish;

import com.google.protobuf.ByteString;
import io.watchfanout.ingester.etcd.EtcdSnapshot;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rebuilds the events of one revision that etcd's watch did not deliver, from the state of
 * the range just before it and a range read at it. A key whose {@code mod_revision} is the
 * revision was put there; a key of the state before that the range read lacks was deleted
 * there. This is exact for the events of the range, because a revision changes each key at
 * most once.
 *
 * <p>Why it exists: etcd 3.4.23 (Debian's; etcd issue 18089) never delivers a
 * DELETE that sits exactly at the compaction revision to a watch that starts there. Without
 * the rebuild the ingester would re-watch from that revision forever.
 *
 * <p>What it cannot know: the order etcd applied the events of a multi-key transaction in.
 * Rebuilt events come in key order.
 *
 * <p>Stateless and thread-safe.
 */
public final class SkippedRevision {
    private static final Comparator<ByteString> KEY_ORDER = ByteString.unsignedLexicographicalComparator();

    private SkippedRevision() {}

    /**
     * @param before the range's state at the revision before, by key
     * @param at the range read at the skipped revision
     * @return the events of {@code at.revision()} in the range, in key order, with
     *     {@code revision} set and chain fields unset
     * @throws IllegalStateException when the range read contradicts the state before (a key
     *     that changed at another revision): the state before was not the revision before
     */
    public static List<Event> events(Map<ByteString, KeyValue> before, EtcdSnapshot at) {
        long revision = at.revision();
        Map<ByteString, KeyValue> gone = new HashMap<>(before);
        List<Event> events = new ArrayList<>();
        for (KeyValue kv : at.kvs()) {
            KeyValue prev = gone.remove(kv.getKey());
            if (kv.getModRevision() == revision) {
                Event.Builder put =
                        Event.newBuilder().setType(Event.Type.PUT).setKv(kv).setRevision(revision);
                if (prev != null) {
                    put.setPrevKv(prev);
                }
                events.add(put.build());
            } else if (!kv.equals(prev)) {
                throw new IllegalStateException(
                        "key " + kv.getKey().toStringUtf8() + " changed at revision " + kv.getModRevision()
                                + ", not at " + revision + ", yet differs from the state before " + revision);
            }
        }
        for (KeyValue prev : gone.values()) {
            events.add(Event.newBuilder()
                    .setType(Event.Type.DELETE)
                    .setKv(KeyValue.newBuilder().setKey(prev.getKey()).setModRevision(revision))
                    .setPrevKv(prev)
                    .setRevision(revision)
                    .build());
        }
        events.sort((a, b) -> KEY_ORDER.compare(a.getKv().getKey(), b.getKv().getKey()));
        return events;
    }

    /** The state after a range read, by key. */
    public static Map<ByteString, KeyValue> state(EtcdSnapshot at) {
        Map<ByteString, KeyValue> state = new HashMap<>(at.kvs().size() * 2);
        for (KeyValue kv : at.kvs()) {
            state.put(kv.getKey(), kv);
        }
        return state;
    }
}
