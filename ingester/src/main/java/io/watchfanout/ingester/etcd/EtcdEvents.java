package io.watchfanout.ingester.etcd;

import io.etcd.jetcd.watch.WatchEvent;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;

/**
 * Converts etcd's key-values and events — jetcd's, or etcd's own gRPC messages as jetcd received
 * them — into the schema's records. Keys and values share the bytes of the etcd response: both
 * sides are immutable {@code ByteString}s. Stateless.
 */
public final class EtcdEvents {
    private EtcdEvents() {}

    /**
     * Converts a jetcd key-value, field by field (etcd's mvccpb.KeyValue); the key and value share
     * the bytes of the etcd response ({@link JetcdInternals}).
     */
    public static KeyValue toKeyValue(io.etcd.jetcd.KeyValue kv) {
        return KeyValue.newBuilder()
                .setKey(JetcdInternals.bytes(kv.getKey()))
                .setCreateRevision(kv.getCreateRevision())
                .setModRevision(kv.getModRevision())
                .setVersion(kv.getVersion())
                .setValue(JetcdInternals.bytes(kv.getValue()))
                .setLease(kv.getLease())
                .build();
    }

    /** Converts etcd's own mvccpb.KeyValue, field by field. */
    public static KeyValue toKeyValue(io.etcd.jetcd.api.KeyValue kv) {
        return KeyValue.newBuilder()
                .setKey(kv.getKey())
                .setCreateRevision(kv.getCreateRevision())
                .setModRevision(kv.getModRevision())
                .setVersion(kv.getVersion())
                .setValue(kv.getValue())
                .setLease(kv.getLease())
                .build();
    }

    /**
     * Converts a jetcd watch event. The revision is the event's {@code kv.mod_revision} (for a
     * delete, etcd sets it to the deletion revision). A new key's prev_kv, which jetcd gives
     * as an empty key-value with mod revision 0, is left unset.
     *
     * @throws IllegalArgumentException for an event type this version does not know
     */
    public static Event toEvent(WatchEvent event) {
        io.etcd.jetcd.KeyValue prev = event.getPrevKV();
        return event(
                event.getEventType().name(),
                toKeyValue(event.getKeyValue()),
                prev != null && prev.getModRevision() != 0 ? toKeyValue(prev) : null);
    }

    /**
     * Converts etcd's own watch event (mvccpb.Event) as {@link #toEvent(WatchEvent)} converts
     * jetcd's, without jetcd's copy of it.
     *
     * @throws IllegalArgumentException for an event type this version does not know
     */
    public static Event toEvent(io.etcd.jetcd.api.Event event) {
        return event(
                event.getType().name(),
                toKeyValue(event.getKv()),
                event.hasPrevKv() && event.getPrevKv().getModRevision() != 0 ? toKeyValue(event.getPrevKv()) : null);
    }

    private static Event event(String type, KeyValue kv, KeyValue prevKv) {
        Event.Builder b = Event.newBuilder();
        switch (type) {
            case "PUT":
                b.setType(Event.Type.PUT);
                break;
            case "DELETE":
                b.setType(Event.Type.DELETE);
                break;
            default:
                throw new IllegalArgumentException("unknown etcd event type " + type);
        }
        b.setKv(kv).setRevision(kv.getModRevision());
        if (prevKv != null) {
            b.setPrevKv(prevKv);
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
