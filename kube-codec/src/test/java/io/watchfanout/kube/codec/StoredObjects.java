package io.watchfanout.kube.codec;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Apps;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Objects as kube-apiserver writes them into etcd, made for tests: typed messages built with
 * client-java-proto's generated classes, or given in protobuf's JSON form (the schema's field
 * names, {@code Time} as {@code {"seconds": N}}), wrapped in the {@code k8s\0} +
 * {@code runtime.Unknown} envelope ({@link StorageEnvelope}); or the JSON of a JSON-stored object.
 * And the way back: an envelope the node wrote, decoded with the schema.
 */
public final class StoredObjects {
    private StoredObjects() {}

    /** The stored envelope of a {@code apiVersion} {@code kind} whose message is {@code protoJson}. */
    public static byte[] protobuf(String apiVersion, String kind, String protoJson) {
        Descriptor type = KubeSchema.standard()
                .type(apiVersion, kind)
                .orElseThrow(() -> new IllegalArgumentException("no schema for " + apiVersion + " " + kind));
        DynamicMessage.Builder b = DynamicMessage.newBuilder(type);
        try {
            JsonFormat.parser().merge(protoJson, b);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(protoJson, e);
        }
        return StorageEnvelope.wrap(apiVersion, kind, b.build());
    }

    /**
     * The stored envelope of {@code message}, built with client-java-proto's generated classes:
     * a field set to its zero value is on the wire, as Go's protobuf marshals every value field.
     */
    public static byte[] protobuf(String apiVersion, String kind, Message message) {
        return StorageEnvelope.wrap(apiVersion, kind, message);
    }

    /** The metadata of a namespaced object as kube-apiserver fills it on create (no resourceVersion: the node sets it). */
    public static Meta.ObjectMeta.Builder meta(String namespace, String name) {
        return Meta.ObjectMeta.newBuilder()
                .setName(name)
                .setNamespace(namespace)
                .setUid("uid-" + name)
                .setCreationTimestamp(Meta.Time.newBuilder().setSeconds(1_700_000_000L));
    }

    /** A running pod's message: one container, labelled {@code app}, bound to {@code node}. */
    public static V1.Pod.Builder podMessage(String namespace, String name, String node, String phase, String app) {
        return V1.Pod.newBuilder()
                .setMetadata(meta(namespace, name).putLabels("app", app))
                .setSpec(V1.PodSpec.newBuilder()
                        .setNodeName(node)
                        .setRestartPolicy("Always")
                        .addContainers(V1.Container.newBuilder().setName("main").setImage("nginx:1.27")))
                .setStatus(V1.PodStatus.newBuilder()
                        .setPhase(phase)
                        .setPodIP("10.0.0.1")
                        .addContainerStatuses(V1.ContainerStatus.newBuilder()
                                .setName("main")
                                .setReady(true)
                                .setRestartCount(0)
                                .setImage("nginx:1.27")
                                .setImageID("")
                                .setState(V1.ContainerState.newBuilder()
                                        .setRunning(V1.ContainerStateRunning.newBuilder()
                                                .setStartedAt(
                                                        Meta.Time.newBuilder().setSeconds(1_700_000_001L))))));
    }

    /** A Pod as kube-apiserver stores it. */
    public static byte[] pod(String namespace, String name, String node, String phase, String app) {
        return StorageEnvelope.wrap(
                "v1", "Pod", podMessage(namespace, name, node, phase, app).build());
    }

    /** A ConfigMap as kube-apiserver stores it, holding {@code key}: {@code value}. */
    public static byte[] configMap(String namespace, String name, String key, String value) {
        return StorageEnvelope.wrap(
                "v1",
                "ConfigMap",
                V1.ConfigMap.newBuilder()
                        .setMetadata(meta(namespace, name))
                        .putData(key, value)
                        .build());
    }

    /** An Opaque Secret as kube-apiserver stores it, holding {@code key}: {@code value}. */
    public static byte[] secret(String namespace, String name, String key, byte[] value) {
        return StorageEnvelope.wrap(
                "v1",
                "Secret",
                V1.Secret.newBuilder()
                        .setMetadata(meta(namespace, name))
                        .setType("Opaque")
                        .putData(key, ByteString.copyFrom(value))
                        .build());
    }

    /** A Deployment of {@code replicas} pods labelled {@code app: name}, as kube-apiserver stores it. */
    public static byte[] deployment(String namespace, String name, int replicas) {
        return StorageEnvelope.wrap(
                "apps/v1",
                "Deployment",
                V1Apps.Deployment.newBuilder()
                        .setMetadata(meta(namespace, name).setGeneration(1))
                        .setSpec(V1Apps.DeploymentSpec.newBuilder()
                                .setReplicas(replicas)
                                .setSelector(Meta.LabelSelector.newBuilder().putMatchLabels("app", name))
                                .setTemplate(V1.PodTemplateSpec.newBuilder()
                                        .setMetadata(
                                                Meta.ObjectMeta.newBuilder().putLabels("app", name))
                                        .setSpec(V1.PodSpec.newBuilder()
                                                .addContainers(V1.Container.newBuilder()
                                                        .setName("main")
                                                        .setImage("nginx:1.27")))))
                        .setStatus(V1Apps.DeploymentStatus.newBuilder()
                                .setObservedGeneration(1)
                                .setReplicas(replicas)
                                .setReadyReplicas(replicas))
                        .build());
    }

    /** The object of a protobuf envelope, decoded with the schema (for checking what the node wrote). */
    public static DynamicMessage decode(byte[] envelope) throws InvalidProtocolBufferException {
        StoredObject object = StoredObject.of(envelope, 0, envelope.length);
        Descriptor type = KubeSchema.standard()
                .type(object.apiVersion(), object.kind())
                .or(() -> KubeSchema.standard().message("k8s.io.apimachinery.pkg.apis.meta.v1." + object.kind()))
                .orElseThrow(() -> new AssertionError("no schema for " + object.apiVersion() + " " + object.kind()));
        return DynamicMessage.parseFrom(
                type, Arrays.copyOfRange(envelope, object.rawOffset(), object.rawOffset() + object.rawLength()));
    }

    /** {@code metadata.resourceVersion} of a decoded object or list. */
    public static String resourceVersion(DynamicMessage object) {
        DynamicMessage meta =
                (DynamicMessage) object.getField(object.getDescriptorForType().findFieldByName("metadata"));
        return (String) meta.getField(meta.getDescriptorForType().findFieldByName("resourceVersion"));
    }

    /** A CRD of namespaced {@code widgets.example.com}, stored as JSON (as kube-apiserver stores CRDs). */
    public static byte[] widgetDefinition() {
        return ("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                        + "\"metadata\":{\"name\":\"widgets.example.com\",\"uid\":\"u-crd\","
                        + "\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},"
                        + "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
                        + "\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\","
                        + "\"listKind\":\"WidgetList\",\"shortNames\":[\"wd\"]},"
                        + "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
                        + "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}},"
                        + "\"additionalPrinterColumns\":[{\"name\":\"Size\",\"type\":\"integer\",\"jsonPath\":\".spec.size\"}]}]},"
                        + "\"status\":{\"conditions\":[{\"type\":\"Established\",\"status\":\"True\"}],"
                        + "\"acceptedNames\":{\"plural\":\"widgets\",\"kind\":\"Widget\"},\"storedVersions\":[\"v1\"]}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** A Widget, stored as JSON. */
    public static byte[] widget(String namespace, String name, int size) {
        return ("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"" + name
                        + "\",\"namespace\":\"" + namespace + "\",\"uid\":\"u-" + name
                        + "\",\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{\"size\":" + size + "}}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
