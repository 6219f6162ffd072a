package io.watchfanout.fanout.kube;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import io.watchfanout.fanout.security.Rbac;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads stored RBAC objects (rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding,
 * ClusterRoleBinding, as kube-apiserver stores them) into the records {@link Rbac} decides with.
 * Runs when a policy object changes, never per event of other resources, so it decodes with
 * protobuf's {@code DynamicMessage} over the schema's descriptors.
 *
 * <p>Thread-safe: stateless.
 */
public final class RbacObjects {
    private RbacObjects() {}

    /** The rules of a stored Role or ClusterRole. */
    public static List<Rbac.Rule> rules(byte[] value) throws UndecodableObjectException {
        DynamicMessage role = decode(value, "Role", "ClusterRole");
        List<Rbac.Rule> rules = new ArrayList<>();
        for (DynamicMessage rule : messages(role, "rules")) {
            rules.add(new Rbac.Rule(
                    strings(rule, "verbs"),
                    strings(rule, "apiGroups"),
                    strings(rule, "resources"),
                    strings(rule, "resourceNames"),
                    strings(rule, "nonResourceURLs")));
        }
        return rules;
    }

    /**
     * A stored RoleBinding ({@code namespace} its namespace) or ClusterRoleBinding ({@code namespace}
     * empty).
     */
    public static Rbac.Binding binding(byte[] value, String namespace, String name) throws UndecodableObjectException {
        DynamicMessage binding = decode(value, "RoleBinding", "ClusterRoleBinding");
        DynamicMessage roleRef = message(binding, "roleRef");
        List<Rbac.Subject> subjects = new ArrayList<>();
        for (DynamicMessage s : messages(binding, "subjects")) {
            subjects.add(new Rbac.Subject(string(s, "kind"), string(s, "name"), string(s, "namespace")));
        }
        return new Rbac.Binding(
                namespace, name, string(roleRef, "kind"), string(roleRef, "name"), List.copyOf(subjects));
    }

    private static DynamicMessage decode(byte[] value, String... kinds) throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, 0, value.length);
        if (!object.isProtobuf()) {
            throw new UndecodableObjectException("an RBAC object not stored as protobuf (" + object.encoding() + ")");
        }
        if (!List.of(kinds).contains(object.kind())) {
            throw new UndecodableObjectException(
                    "a " + object.kind() + " where " + String.join(" or ", kinds) + " was expected");
        }
        Descriptor type = KubeSchema.standard()
                .type(object.apiVersion(), object.kind())
                .orElseThrow(() -> new UndecodableObjectException("no schema for " + object.apiVersion()));
        try {
            return DynamicMessage.parseFrom(type, ByteString.copyFrom(value, object.rawOffset(), object.rawLength()));
        } catch (InvalidProtocolBufferException e) {
            throw new UndecodableObjectException("malformed " + object.kind() + ": " + e.getMessage());
        }
    }

    private static List<DynamicMessage> messages(DynamicMessage m, String field) {
        FieldDescriptor f = m.getDescriptorForType().findFieldByName(field);
        List<DynamicMessage> out = new ArrayList<>();
        for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
            out.add((DynamicMessage) m.getRepeatedField(f, i));
        }
        return out;
    }

    private static DynamicMessage message(DynamicMessage m, String field) {
        return (DynamicMessage) m.getField(m.getDescriptorForType().findFieldByName(field));
    }

    private static Set<String> strings(DynamicMessage m, String field) {
        FieldDescriptor f = m.getDescriptorForType().findFieldByName(field);
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
            out.add((String) m.getRepeatedField(f, i));
        }
        return Set.copyOf(out);
    }

    private static String string(DynamicMessage m, String field) {
        return (String) m.getField(m.getDescriptorForType().findFieldByName(field));
    }
}
