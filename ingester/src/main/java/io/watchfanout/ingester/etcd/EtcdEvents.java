package io.watchfanout.ingester.etcd;

import io.etcd.jetcd.watch.WatchEvent;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;

/** Converts jetcd's key-values and events into the schema's records. Stateless. */
public final class EtcdEvents {
    private EtcdEvents() {}

    /**
     * Converts a jetcd key-value, field by field (etcd's mvccpb.KeyValue); the key and value share
     * the bytes of the etcd response ({@link ByteSequences}).
     */
    public static KeyValue toKeyValue(io.etcd.jetcd.KeyValue kv) {
        return KeyValue.newBuilder()
                .setKey(ByteSequences.bytes(kv.getKey()))
                .setCreateRevision(kv.getCreateRevision())
                .setModRevision(kv.getModRevision())
                .setVersion(kv.getVersion())
                .setValue(ByteSequences.bytes(kv.getValue()))
                .setLease(kv.getLease())
                .build();
    }

    /**
     * Converts a watch event. The revision is the event's {@code kv.mod_revision} (for a
     * delete, etcd sets it to the deletion revision). A new key's prev_kv, which jetcd gives
     * as an empty key-value with mod revision 0, is left unset.
     *
     * @throws IllegalArgumentException for an event type this version does not know
     */
    public static Event toEvent(WatchEvent event) {
        Event.Builder b = Event.newBuilder();
        switch (event.getEventType()) {
            case PUT:
                b.setType(Event.Type.PUT);
                break;
            case DELETE:
                b.setType(Event.Type.DELETE);
                break;
            default:
                throw new IllegalArgumentException("unknown etcd event type " + event.getEventType());
        }
        KeyValue kv = toKeyValue(event.getKeyValue());
        b.setKv(kv).setRevision(kv.getModRevision());
        io.etcd.jetcd.KeyValue prev = event.getPrevKV();
        if (prev != null && prev.getModRevision() != 0) {
            b.setPrevKv(toKeyValue(prev));
        }
        return b.build();
    }

    /** Bytes held by an event's keys and values, to bound queues. */
    public static long approximateBytes(Event event) {
        return 64L
                + event.getKv().getKey().size()
                + event.getKv().getValue().size()
                + event.getPrevKv().getKey().size()
                + event.getPrevKv().getValue().size();
    }
}
