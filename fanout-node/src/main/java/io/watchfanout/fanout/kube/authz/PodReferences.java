package io.watchfanout.fanout.kube.authz;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.UndecodableObjectException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What a stored pod links to its node for the Node authorizer: its {@code spec.nodeName} and the
 * Secrets, ConfigMaps and PersistentVolumeClaims it references, found where kube-apiserver's
 * graph looks (kubernetes {@code pkg/api/v1/pod} {@code VisitPodSecretNames} and
 * {@code VisitPodConfigmapNames}): image pull secrets, volumes (secret, configMap, projected
 * sources, persistentVolumeClaim, CSI node-publish secrets) and every container's {@code env}
 * and {@code envFrom}, init and ephemeral containers included.
 *
 * <p>Runs once per pod change; thread-safe (stateless).
 */
public final class PodReferences {
    private static final String CONTAINERS = "{containers,initContainers,ephemeralContainers.ephemeralContainerCommon}";

    private static final List<String> SECRETS = List.of(
            "spec.imagePullSecrets[].name",
            "spec.volumes[].volumeSource.secret.secretName",
            "spec.volumes[].volumeSource.projected.sources[].secret.localObjectReference.name",
            "spec.volumes[].volumeSource.csi.nodePublishSecretRef.name",
            CONTAINERS + "[].env[].valueFrom.secretKeyRef.localObjectReference.name",
            CONTAINERS + "[].envFrom[].secretRef.localObjectReference.name");
    private static final List<String> CONFIG_MAPS = List.of(
            "spec.volumes[].volumeSource.configMap.localObjectReference.name",
            "spec.volumes[].volumeSource.projected.sources[].configMap.localObjectReference.name",
            CONTAINERS + "[].env[].valueFrom.configMapKeyRef.localObjectReference.name",
            CONTAINERS + "[].envFrom[].configMapRef.localObjectReference.name");
    private static final List<String> CLAIMS = List.of("spec.volumes[].volumeSource.persistentVolumeClaim.claimName");

    private PodReferences() {}

    /**
     * The links of the stored pod {@code value}: protobuf as kube-apiserver stores pods by default,
     * or JSON (a cluster run with {@code --storage-media-type=application/json}).
     *
     * @throws UndecodableObjectException when it is not a readable Pod
     */
    public static NodeGraph.PodLinks of(byte[] value) throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, 0, value.length);
        Collector pod;
        switch (object.encoding()) {
            case PROTOBUF -> pod = protobuf(value, object);
            case JSON -> pod = json(value);
            default -> throw new UndecodableObjectException("a Pod stored as " + object.encoding());
        }
        List<String> node = new ArrayList<>();
        pod.collect("spec.nodeName", node);
        return NodeGraph.links(
                node.isEmpty() ? "" : node.get(0), all(pod, SECRETS), all(pod, CONFIG_MAPS), all(pod, CLAIMS));
    }

    /** Adds the strings at a path (dotted proto field names, {@code []} after a repeated field) to a list. */
    private interface Collector {
        void collect(String path, List<String> out);
    }

    private static Collector protobuf(byte[] value, StoredObject object) throws UndecodableObjectException {
        if (!object.kind().equals("Pod")) {
            throw new UndecodableObjectException("a " + object.kind() + " where a Pod was expected");
        }
        Descriptor type = KubeSchema.standard()
                .type(object.apiVersion(), "Pod")
                .orElseThrow(() -> new UndecodableObjectException("no schema for " + object.apiVersion() + " Pod"));
        DynamicMessage pod;
        try {
            pod = DynamicMessage.parseFrom(type, ByteString.copyFrom(value, object.rawOffset(), object.rawLength()));
        } catch (InvalidProtocolBufferException e) {
            throw new UndecodableObjectException("malformed Pod: " + e.getMessage());
        }
        return (path, out) -> collect(pod, path, out);
    }

    private static Collector json(byte[] value) throws UndecodableObjectException {
        JsonObject pod;
        try {
            pod = JsonParser.parseString(new String(value, StandardCharsets.UTF_8))
                    .getAsJsonObject();
        } catch (RuntimeException e) {
            throw new UndecodableObjectException("malformed JSON: " + e.getMessage());
        }
        JsonElement kind = pod.get("kind");
        if (kind == null || !kind.isJsonPrimitive() || !kind.getAsString().equals("Pod")) {
            throw new UndecodableObjectException("a " + kind + " where a Pod was expected");
        }
        return (path, out) -> collect(pod, jsonSegments(path), 0, out);
    }

    /**
     * The JSON field names of a proto path: the messages Go embeds in their parent (a volume's
     * {@code VolumeSource}, a reference's {@code LocalObjectReference}, an ephemeral container's
     * {@code EphemeralContainerCommon}) are fields in protobuf and inlined in JSON.
     */
    private static List<String> jsonSegments(String path) {
        List<String> names = new ArrayList<>();
        for (String segment : path.split("\\.")) {
            String name = segment.endsWith("[]") ? segment.substring(0, segment.length() - 2) : segment;
            if (!EMBEDDED.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }

    private static final Set<String> EMBEDDED =
            Set.of("volumeSource", "localObjectReference", "ephemeralContainerCommon");

    private static void collect(JsonElement e, List<String> path, int at, List<String> out) {
        if (e == null || e.isJsonNull()) {
            return;
        }
        if (e.isJsonArray()) {
            for (JsonElement item : e.getAsJsonArray()) {
                collect(item, path, at, out);
            }
        } else if (at == path.size()) {
            if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
                out.add(e.getAsString());
            }
        } else if (e.isJsonObject()) {
            collect(e.getAsJsonObject().get(path.get(at)), path, at + 1, out);
        }
    }

    private static List<String> all(Collector pod, List<String> paths) {
        List<String> out = new ArrayList<>();
        for (String path : paths) {
            if (path.startsWith("{")) {
                int close = path.indexOf('}');
                for (String container : path.substring(1, close).split(",")) {
                    pod.collect("spec." + container + path.substring(close + 1), out);
                }
            } else {
                pod.collect(path, out);
            }
        }
        out.removeIf(String::isEmpty);
        return out;
    }

    /** Adds the strings at {@code path} (dotted proto field names, {@code []} after a repeated field). */
    private static void collect(DynamicMessage m, String path, List<String> out) {
        int dot = path.indexOf('.');
        String head = dot < 0 ? path : path.substring(0, dot);
        String rest = dot < 0 ? "" : path.substring(dot + 1);
        boolean repeated = head.endsWith("[]");
        String name = repeated ? head.substring(0, head.length() - 2) : head;
        FieldDescriptor f = m.getDescriptorForType().findFieldByName(name);
        if (f == null) {
            throw new IllegalStateException(
                    "no field " + name + " in " + m.getDescriptorForType().getFullName());
        }
        List<Object> values = new ArrayList<>();
        if (f.isRepeated()) {
            for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
                values.add(m.getRepeatedField(f, i));
            }
        } else if (m.hasField(f)) {
            values.add(m.getField(f));
        }
        for (Object v : values) {
            if (rest.isEmpty()) {
                if (v instanceof String s) {
                    out.add(s);
                }
            } else if (v instanceof DynamicMessage child) {
                collect(child, rest, out);
            }
        }
    }
}
