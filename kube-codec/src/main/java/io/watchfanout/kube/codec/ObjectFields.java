package io.watchfanout.kube.codec;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import io.watchfanout.kube.codec.resources.KubeResource;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads the attributes selectors need from a stored protobuf object without decoding it: the
 * labels ({@code metadata.labels}) and the value of a selectable field such as
 * {@code spec.nodeName} or {@code status.phase}, as kube-apiserver's registries give them in
 * their field sets ({@code GetAttrs}): strings as stored, booleans {@code "true"}/{@code "false"},
 * integers in decimal, and an absent field as the zero value's form ({@code ""}, {@code "false"},
 * {@code "0"}). {@code metadata.name} and {@code metadata.namespace} come from the key.
 *
 * <p>Meant to run once per event (the core keeps the result on the event), never per watcher.
 * Thread-safe: the path plans are cached in a concurrent map.
 */
public final class ObjectFields {
    private static final int OBJECT_META = 1;
    private static final int LABELS = 11;
    /**
     * Field selectors whose name is not their path: core Event's {@code source} is the component,
     * Job's {@code status.successful} its {@code status.succeeded}.
     */
    private static final Map<String, String> ALIASES =
            Map.of("source", "source.component", "status.successful", "status.succeeded");

    private final Map<Descriptor, Map<String, Path>> paths = new ConcurrentHashMap<>();

    /**
     * The labels of the object {@code value[rawOffset, rawOffset + rawLength)} as located by {@code object}.
     *
     * @throws UndecodableObjectException if the bytes are malformed
     */
    public Map<String, String> labels(byte[] value, StoredObject object) throws UndecodableObjectException {
        Map<String, String> labels = new HashMap<>();
        try {
            ProtoReader meta = object.typed(value).lastMessage(OBJECT_META);
            if (meta == null) {
                return labels;
            }
            FieldRuns fields = FieldRuns.read(meta);
            for (int r = 0; r < fields.size(); r++) {
                if (fields.number(r) != LABELS) {
                    continue;
                }
                for (int i = fields.start(r); i < fields.end(r); i++) {
                    FieldRuns entry = FieldRuns.read(fields.valueReader(value, i));
                    int k = entry.last(1);
                    int v = entry.last(2);
                    labels.put(k < 0 ? "" : string(value, entry, k), v < 0 ? "" : string(value, entry, v));
                }
            }
        } catch (ProtoReader.MalformedException e) {
            throw new UndecodableObjectException("malformed metadata: " + e.getMessage());
        }
        return labels;
    }

    /**
     * The values of {@code fields} (selectable field names, see {@link KubeResource#fieldSelectors})
     * of the object of message {@code type}; {@code metadata.name} and {@code metadata.namespace}
     * are the caller's (from the key).
     *
     * @throws UndecodableObjectException if the bytes are malformed or a field is not in the schema
     */
    public Map<String, String> values(byte[] value, StoredObject object, Descriptor type, List<String> fields)
            throws UndecodableObjectException {
        Map<String, String> values = new HashMap<>();
        for (String field : fields) {
            if (field.equals("metadata.name") || field.equals("metadata.namespace")) {
                continue;
            }
            Path path = paths.computeIfAbsent(type, t -> new ConcurrentHashMap<>())
                    .computeIfAbsent(field, f -> Path.of(type, ALIASES.getOrDefault(f, f)));
            if (path == null) {
                throw new UndecodableObjectException("field " + field + " is not in the schema of " + type.getName());
            }
            try {
                values.put(field, path.read(value, object.rawOffset(), object.rawOffset() + object.rawLength()));
            } catch (ProtoReader.MalformedException e) {
                throw new UndecodableObjectException(
                        "malformed " + type.getName() + " reading " + field + ": " + e.getMessage());
            }
        }
        return values;
    }

    private static String string(byte[] value, FieldRuns fields, int entry) throws ProtoReader.MalformedException {
        return new String(value, fields.valueOffset(entry), fields.length(entry), StandardCharsets.UTF_8);
    }

    /** A dotted JSON path resolved to field numbers, the last one a scalar. */
    private record Path(int[] numbers, FieldDescriptor leaf) {
        static Path of(Descriptor type, String dotted) {
            String[] names = dotted.split("\\.");
            int[] numbers = new int[names.length];
            Descriptor current = type;
            FieldDescriptor field = null;
            for (int i = 0; i < names.length; i++) {
                if (current == null) {
                    return null;
                }
                field = null;
                for (FieldDescriptor f : current.getFields()) {
                    if (MessagePlans.jsonName(current, f).equals(names[i])) {
                        field = f;
                        break;
                    }
                }
                if (field == null || field.isRepeated()) {
                    return null;
                }
                numbers[i] = field.getNumber();
                current = field.getJavaType() == FieldDescriptor.JavaType.MESSAGE ? field.getMessageType() : null;
            }
            return current == null ? new Path(numbers, field) : null;
        }

        String read(byte[] buf, int from, int to) throws ProtoReader.MalformedException {
            ProtoReader in = new ProtoReader(buf, from, to);
            for (int i = 0; i < numbers.length - 1; i++) {
                in = in.lastMessage(numbers[i]);
                if (in == null) {
                    return zero();
                }
            }
            FieldRuns fields = FieldRuns.read(in);
            int entry = fields.last(numbers[numbers.length - 1]);
            if (entry < 0) {
                return zero();
            }
            return switch (leaf.getJavaType()) {
                case STRING -> string(buf, fields, entry);
                case BOOLEAN -> fields.varint(entry) != 0 ? "true" : "false";
                case INT -> Integer.toString((int) fields.varint(entry));
                default -> Long.toString(fields.varint(entry));
            };
        }

        private String zero() {
            return switch (leaf.getJavaType()) {
                case STRING -> "";
                case BOOLEAN -> "false";
                default -> "0";
            };
        }
    }
}
