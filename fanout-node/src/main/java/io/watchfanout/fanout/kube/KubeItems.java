package io.watchfanout.fanout.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.Descriptors.Descriptor;
import io.watchfanout.common.JsonBuffer;
import io.watchfanout.kube.codec.AtRest;
import io.watchfanout.kube.codec.JsonFields;
import io.watchfanout.kube.codec.KubeListWriter;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.KubeWatchFrames;
import io.watchfanout.kube.codec.ObjectFields;
import io.watchfanout.kube.codec.PartialObjectMetadata;
import io.watchfanout.kube.codec.ProtoJsonWriter;
import io.watchfanout.kube.codec.ResourceVersionSplice;
import io.watchfanout.kube.codec.StoredBytes;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.select.FieldSelector;
import io.watchfanout.kube.codec.select.LabelSelector;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns stored key-values into what a Kubernetes read answers: {@link #jsonItem} an object's JSON
 * for a Table row, {@link #object} a get's whole object, and {@link #matches} decides label and field
 * selectors from the stored bytes. {@code metadata.resourceVersion} is the key's mod revision.
 *
 * <p>Thread-safe: the schema, writer and field plans are shared and immutable once made.
 */
final class KubeItems {
    /** A rendered item or object and the fields the schema did not know (JSON forms only). */
    record Rendered(byte[] bytes, int unknownFields) {}

    private final KubeSchema schema;
    private final ProtoJsonWriter writer;
    private final ObjectFields fields = new ObjectFields();

    KubeItems(KubeSchema schema, ProtoJsonWriter writer) {
        this.schema = schema;
        this.writer = writer;
    }

    /**
     * One object's JSON without kind and apiVersion (a JSON-stored object as stored, which carries
     * them): what a Table row is read from. Lists write their items themselves ({@link KubeListWriter}).
     *
     * @throws UndecodableObjectException when the value cannot be rendered
     */
    Rendered jsonItem(KeyValue kv) throws UndecodableObjectException {
        StoredBytes stored = AtRest.open(kv);
        return json(stored, StoredObject.of(stored.array, stored.offset, stored.length), false, kv.getModRevision());
    }

    /**
     * A get's object in {@code format} (Table is rendered from the JSON): JSON with kind and
     * apiVersion, or the full protobuf envelope with the resourceVersion spliced in, or the
     * object's {@link PartialObjectMetadata} in either.
     *
     * @throws UndecodableObjectException when the value cannot be rendered in that form
     */
    Rendered object(KeyValue kv, KubeFormat format) throws UndecodableObjectException {
        StoredBytes stored = AtRest.open(kv);
        byte[] value = stored.array;
        if (format == KubeFormat.METADATA_PROTOBUF) {
            return new Rendered(
                    PartialObjectMetadata.protobufEnvelope(value, stored.offset, stored.length, kv.getModRevision()),
                    0);
        }
        if (format == KubeFormat.METADATA_JSON) {
            JsonBuffer out = new JsonBuffer(512);
            int unknown =
                    PartialObjectMetadata.writeJson(out, value, stored.offset, stored.length, kv.getModRevision());
            return new Rendered(Arrays.copyOf(out.array(), out.length()), unknown);
        }
        StoredObject object = StoredObject.of(value, stored.offset, stored.length);
        if (format == KubeFormat.PROTOBUF) {
            if (!object.isProtobuf()) {
                throw KubeWatchFrames.undecodable(object);
            }
            return new Rendered(
                    ResourceVersionSplice.of(value, stored.offset, stored.length, object, kv.getModRevision())
                            .envelope(),
                    0);
        }
        return json(stored, object, true, kv.getModRevision());
    }

    /**
     * Whether the stored object matches both selectors; {@code name} and {@code namespace} (from
     * its key) answer {@code metadata.name} and {@code metadata.namespace}.
     *
     * @throws UndecodableObjectException when the attributes cannot be read
     */
    boolean matches(KeyValue kv, String namespace, String name, LabelSelector labels, FieldSelector fieldSelector)
            throws UndecodableObjectException {
        if (labels.isEverything() && fieldSelector.isEverything()) {
            return true;
        }
        StoredBytes stored = AtRest.open(kv);
        byte[] value = stored.array;
        StoredObject object = StoredObject.of(value, stored.offset, stored.length);
        Map<String, String> labelValues;
        Map<String, String> fieldValues;
        switch (object.encoding()) {
            case PROTOBUF -> {
                labelValues = labels.isEverything() ? Map.of() : fields.labels(value, object);
                fieldValues = fieldSelector.isEverything()
                        ? new HashMap<>()
                        : fields.values(value, object, type(object), fieldSelector.fields());
            }
            case JSON -> {
                JsonObject json = parse(stored.copy());
                labelValues = new HashMap<>();
                for (Map.Entry<String, JsonElement> e : JsonFields.obj(JsonFields.obj(json, "metadata"), "labels")
                        .entrySet()) {
                    labelValues.put(
                            e.getKey(),
                            e.getValue().isJsonPrimitive() ? e.getValue().getAsString() : "");
                }
                fieldValues = new HashMap<>();
                for (String field : fieldSelector.fields()) {
                    fieldValues.put(field, jsonField(json, field));
                }
            }
            default -> throw KubeWatchFrames.undecodable(object);
        }
        fieldValues.put("metadata.name", name);
        fieldValues.put("metadata.namespace", namespace);
        return labels.matches(labelValues) && fieldSelector.matches(fieldValues);
    }

    /**
     * The labels of a stored object.
     *
     * @throws UndecodableObjectException when they cannot be read
     */
    Map<String, String> labels(KeyValue kv) throws UndecodableObjectException {
        StoredBytes stored = AtRest.open(kv);
        byte[] value = stored.array;
        StoredObject object = StoredObject.of(value, stored.offset, stored.length);
        switch (object.encoding()) {
            case PROTOBUF -> {
                type(object);
                return fields.labels(value, object);
            }
            case JSON -> {
                Map<String, String> labels = new HashMap<>();
                for (Map.Entry<String, JsonElement> e : JsonFields.obj(
                                JsonFields.obj(parse(stored.copy()), "metadata"), "labels")
                        .entrySet()) {
                    labels.put(
                            e.getKey(),
                            e.getValue().isJsonPrimitive() ? e.getValue().getAsString() : "");
                }
                return labels;
            }
            default -> throw KubeWatchFrames.undecodable(object);
        }
    }

    /**
     * Every selectable field of {@code resource} ({@link KubeResource#fieldSelectors}) of a stored
     * object, without {@code metadata.name} and {@code metadata.namespace} (the key's); a mutable map.
     *
     * @throws UndecodableObjectException when they cannot be read
     */
    Map<String, String> fields(KeyValue kv, KubeResource resource) throws UndecodableObjectException {
        List<String> names = new ArrayList<>(resource.fieldSelectors());
        if (names.isEmpty()) {
            return new HashMap<>();
        }
        StoredBytes stored = AtRest.open(kv);
        byte[] value = stored.array;
        StoredObject object = StoredObject.of(value, stored.offset, stored.length);
        switch (object.encoding()) {
            case PROTOBUF -> {
                return fields.values(value, object, type(object), names);
            }
            case JSON -> {
                JsonObject json = parse(stored.copy());
                Map<String, String> values = new HashMap<>();
                for (String field : names) {
                    values.put(field, jsonField(json, field));
                }
                return values;
            }
            default -> throw KubeWatchFrames.undecodable(object);
        }
    }

    /**
     * Checks, without rendering, that every value of a page has a form the node reads (a
     * protobuf envelope of a kind in its schema, or JSON), so that a bad one is answered with a
     * Status before the first byte of the list.
     *
     * @return the index of the first value that has not, or -1
     */
    int firstUnreadable(List<KeyValue> kvs, KubeFormat format, StringBuilder why) {
        for (int i = 0; i < kvs.size(); i++) {
            StoredBytes head;
            try {
                head = AtRest.open(kvs.get(i));
            } catch (UndecodableObjectException e) {
                why.append(e.getMessage());
                return i;
            }
            StoredObject object = StoredObject.of(head.array, head.offset, head.length);
            // The metadata alone needs no schema of the object's kind: its field 1 is an ObjectMeta.
            boolean readable = object.isProtobuf()
                    ? format.metadata()
                            || schema.type(object.apiVersion(), object.kind()).isPresent()
                    : object.encoding() == StoredObject.StorageEncoding.JSON && !format.protobuf();
            if (!readable) {
                why.append(
                        object.isProtobuf()
                                ? "no schema for " + object.apiVersion() + " " + object.kind() + " on this node"
                                : KubeWatchFrames.undecodable(object).getMessage());
                return i;
            }
        }
        return -1;
    }

    private Rendered json(StoredBytes stored, StoredObject object, boolean withType, long modRevision)
            throws UndecodableObjectException {
        switch (object.encoding()) {
            case PROTOBUF -> {
                JsonBuffer out = new JsonBuffer(Math.max(256, object.rawLength() * 2));
                int unknown = writer.writeObject(
                        out,
                        type(object),
                        withType ? object.apiVersion() : null,
                        withType ? object.kind() : null,
                        stored.array,
                        object.rawOffset(),
                        object.rawLength(),
                        modRevision);
                return new Rendered(Arrays.copyOf(out.array(), out.length()), unknown);
            }
            case JSON -> {
                return new Rendered(KubeWatchFrames.jsonStoredObject(stored.copy(), modRevision), 0);
            }
            default -> throw KubeWatchFrames.undecodable(object);
        }
    }

    private Descriptor type(StoredObject object) throws UndecodableObjectException {
        return schema.type(object.apiVersion(), object.kind())
                .orElseThrow(() -> new UndecodableObjectException(
                        "no schema for " + object.apiVersion() + " " + object.kind() + " on this node"));
    }

    private static JsonObject parse(byte[] value) throws UndecodableObjectException {
        try {
            JsonElement parsed = JsonParser.parseString(new String(value, StandardCharsets.UTF_8));
            if (!parsed.isJsonObject()) {
                throw new UndecodableObjectException("JSON that is not an object");
            }
            return parsed.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new UndecodableObjectException("invalid JSON: " + e.getMessage());
        }
    }

    /** A dotted field of a JSON object as a field selector compares it: scalars as text, else empty. */
    private static String jsonField(JsonObject json, String dotted) {
        JsonElement current = json;
        for (String part : dotted.split("\\.")) {
            if (current == null || !current.isJsonObject()) {
                return "";
            }
            current = current.getAsJsonObject().get(part);
        }
        return current != null && current.isJsonPrimitive() ? current.getAsString() : "";
    }
}
