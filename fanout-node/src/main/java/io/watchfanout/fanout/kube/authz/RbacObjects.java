package io.watchfanout.fanout.kube.authz;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import io.watchfanout.kube.codec.JsonFields;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.UndecodableObjectException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads stored RBAC objects (rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding,
 * ClusterRoleBinding) into the records {@link Rbac} decides with: protobuf as kube-apiserver stores
 * them by default, and JSON as a cluster run with {@code --storage-media-type=application/json}
 * stores them. Runs when a policy object changes, never per event of other resources, so it
 * decodes protobuf with {@code DynamicMessage} over the schema's descriptors and JSON with Gson.
 *
 * <p>Thread-safe: stateless.
 */
public final class RbacObjects {
    private RbacObjects() {}

    /** The rules of a stored Role or ClusterRole. */
    public static List<Rbac.Rule> rules(byte[] value) throws UndecodableObjectException {
        Fields role = decode(value, "Role", "ClusterRole");
        List<Rbac.Rule> rules = new ArrayList<>();
        for (Fields rule : role.objects("rules")) {
            rules.add(new Rbac.Rule(
                    rule.strings("verbs"),
                    rule.strings("apiGroups"),
                    rule.strings("resources"),
                    rule.strings("resourceNames"),
                    rule.strings("nonResourceURLs")));
        }
        return rules;
    }

    /**
     * A stored RoleBinding ({@code namespace} its namespace) or ClusterRoleBinding ({@code namespace}
     * empty).
     */
    public static Rbac.Binding binding(byte[] value, String namespace, String name) throws UndecodableObjectException {
        Fields binding = decode(value, "RoleBinding", "ClusterRoleBinding");
        Fields roleRef = binding.object("roleRef");
        List<Rbac.Subject> subjects = new ArrayList<>();
        for (Fields s : binding.objects("subjects")) {
            subjects.add(new Rbac.Subject(s.string("kind"), s.string("name"), s.string("namespace")));
        }
        return new Rbac.Binding(namespace, name, roleRef.string("kind"), roleRef.string("name"), List.copyOf(subjects));
    }

    private static Fields decode(byte[] value, String... kinds) throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, 0, value.length);
        switch (object.encoding()) {
            case PROTOBUF -> {
                expectKind(object.kind(), kinds);
                Descriptor type = KubeSchema.standard()
                        .type(object.apiVersion(), object.kind())
                        .orElseThrow(() -> new UndecodableObjectException("no schema for " + object.apiVersion()));
                try {
                    return new ProtoFields(DynamicMessage.parseFrom(
                            type, ByteString.copyFrom(value, object.rawOffset(), object.rawLength())));
                } catch (InvalidProtocolBufferException e) {
                    throw new UndecodableObjectException("malformed " + object.kind() + ": " + e.getMessage());
                }
            }
            case JSON -> {
                JsonObject json;
                try {
                    json = JsonParser.parseString(new String(value, StandardCharsets.UTF_8))
                            .getAsJsonObject();
                } catch (RuntimeException e) {
                    throw new UndecodableObjectException("malformed JSON: " + e.getMessage());
                }
                JsonFields fields = new JsonFields(json);
                expectKind(fields.string("kind"), kinds);
                return fields;
            }
            default ->
                throw new UndecodableObjectException(
                        "an RBAC object stored as " + object.encoding() + " (expected: protobuf or JSON)");
        }
    }

    private static void expectKind(String kind, String... kinds) throws UndecodableObjectException {
        if (!List.of(kinds).contains(kind)) {
            throw new UndecodableObjectException(
                    "a " + kind + " where " + String.join(" or ", kinds) + " was expected");
        }
    }

    /** The fields of one stored object or nested message, read the same from protobuf and JSON. */
    private interface Fields {
        List<Fields> objects(String field) throws UndecodableObjectException;

        Fields object(String field) throws UndecodableObjectException;

        Set<String> strings(String field) throws UndecodableObjectException;

        /** The field's string, empty when absent (protobuf's and Go's zero value). */
        String string(String field) throws UndecodableObjectException;
    }

    private record ProtoFields(DynamicMessage m) implements Fields {
        @Override
        public List<Fields> objects(String field) {
            FieldDescriptor f = m.getDescriptorForType().findFieldByName(field);
            List<Fields> out = new ArrayList<>();
            for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
                out.add(new ProtoFields((DynamicMessage) m.getRepeatedField(f, i)));
            }
            return out;
        }

        @Override
        public Fields object(String field) {
            return new ProtoFields(
                    (DynamicMessage) m.getField(m.getDescriptorForType().findFieldByName(field)));
        }

        @Override
        public Set<String> strings(String field) {
            FieldDescriptor f = m.getDescriptorForType().findFieldByName(field);
            Set<String> out = new LinkedHashSet<>();
            for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
                out.add((String) m.getRepeatedField(f, i));
            }
            return Set.copyOf(out);
        }

        @Override
        public String string(String field) {
            return (String) m.getField(m.getDescriptorForType().findFieldByName(field));
        }
    }

    /** A JSON object; a field of the wrong JSON type is undecodable, as Go's decoder refuses it. */
    private record JsonFields(JsonObject o) implements Fields {
        @Override
        public List<Fields> objects(String field) throws UndecodableObjectException {
            List<Fields> out = new ArrayList<>();
            for (JsonElement e : array(field)) {
                if (!e.isJsonObject()) {
                    throw wrongType(field, "an array of objects");
                }
                out.add(new JsonFields(e.getAsJsonObject()));
            }
            return out;
        }

        @Override
        public Fields object(String field) throws UndecodableObjectException {
            JsonElement e = o.get(field);
            if (e == null || e.isJsonNull()) {
                return new JsonFields(new JsonObject());
            }
            if (!e.isJsonObject()) {
                throw wrongType(field, "an object");
            }
            return new JsonFields(e.getAsJsonObject());
        }

        @Override
        public Set<String> strings(String field) throws UndecodableObjectException {
            Set<String> out = new LinkedHashSet<>();
            for (JsonElement e : array(field)) {
                if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
                    throw wrongType(field, "an array of strings");
                }
                out.add(e.getAsString());
            }
            return Set.copyOf(out);
        }

        @Override
        public String string(String field) throws UndecodableObjectException {
            JsonElement e = o.get(field);
            if (e == null || e.isJsonNull()) {
                return "";
            }
            if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
                throw wrongType(field, "a string");
            }
            return e.getAsString();
        }

        private JsonArray array(String field) throws UndecodableObjectException {
            JsonElement e = o.get(field);
            if (e == null || e.isJsonNull()) {
                return new JsonArray();
            }
            if (!e.isJsonArray()) {
                throw wrongType(field, "an array");
            }
            return e.getAsJsonArray();
        }

        private static UndecodableObjectException wrongType(String field, String expected) {
            return new UndecodableObjectException("field " + field + " is not " + expected);
        }
    }
}
