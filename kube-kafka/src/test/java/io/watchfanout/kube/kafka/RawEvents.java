package io.watchfanout.kube.kafka;

import com.google.protobuf.ByteString;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.charset.StandardCharsets;

/** Events-topic records of Kubernetes objects as the ingester publishes them, for the tests. */
public final class RawEvents {
    public static final String CRD_KEY = "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com";

    private RawEvents() {}

    /** A running pod on {@code node}, as kube-apiserver stores it. */
    public static byte[] pod(String namespace, String name, String node) {
        return StoredObjects.pod(namespace, name, node, "Running", name);
    }

    /** An Opaque Secret holding {@code key}: {@code value}. */
    public static byte[] secret(String namespace, String name, String key, String value) {
        return StoredObjects.secret(namespace, name, key, value.getBytes(StandardCharsets.UTF_8));
    }

    /** The established v1 CRD of {@code widgets.example.com} (namespaced, kind Widget), stored as JSON. */
    public static byte[] widgetDefinition() {
        return ("{\"kind\":\"CustomResourceDefinition\",\"apiVersion\":\"apiextensions.k8s.io/v1\","
                        + "\"metadata\":{\"name\":\"widgets.example.com\",\"uid\":\"u-crd\"},"
                        + "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
                        + "\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\"},"
                        + "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true}]},"
                        + "\"status\":{\"conditions\":[{\"type\":\"Established\",\"status\":\"True\"}]}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** A Widget custom resource, stored as JSON. */
    public static byte[] widget(String namespace, String name, int size) {
        return ("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"" + name
                        + "\",\"namespace\":\"" + namespace + "\",\"uid\":\"u-" + name + "\"},\"spec\":{\"size\":"
                        + size + "}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    public static KeyValue kv(String key, byte[] value, long createRevision, long modRevision, long version) {
        return KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setValue(ByteString.copyFrom(value))
                .setCreateRevision(createRevision)
                .setModRevision(modRevision)
                .setVersion(version)
                .build();
    }

    /** A PUT of {@code kv} at its mod revision, {@code prev} the value before (null: a new key). */
    public static EventsRecord put(KeyValue kv, KeyValue prev, long prevRevision) {
        Event.Builder e = Event.newBuilder()
                .setType(Event.Type.PUT)
                .setKv(kv)
                .setRevision(kv.getModRevision())
                .setIndex(0)
                .setCount(1)
                .setPrevRevision(prevRevision);
        if (prev != null) {
            e.setPrevKv(prev);
        }
        return EventsRecord.newBuilder().setEvent(e).build();
    }

    /** The DELETE of {@code prev}'s key at {@code revision}. */
    public static EventsRecord delete(KeyValue prev, long revision, long prevRevision) {
        return EventsRecord.newBuilder()
                .setEvent(Event.newBuilder()
                        .setType(Event.Type.DELETE)
                        .setKv(KeyValue.newBuilder().setKey(prev.getKey()).setModRevision(revision))
                        .setPrevKv(prev)
                        .setRevision(revision)
                        .setIndex(0)
                        .setCount(1)
                        .setPrevRevision(prevRevision))
                .build();
    }
}
