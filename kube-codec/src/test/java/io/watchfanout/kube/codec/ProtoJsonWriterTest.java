package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Admissionregistration;
import io.kubernetes.client.proto.V1Apiextensions;
import io.kubernetes.client.proto.V1Apps;
import io.kubernetes.client.proto.V1Policy;
import io.watchfanout.common.JsonBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every fixture of kube-apiserver's serializer, stored as protobuf, written as JSON: the JSON
 * equals the serializer's own JSON of the same object, with the resourceVersion set from the
 * revision; a field the schema does not know is missing from the JSON only when the writer
 * counted unknown fields. Zero values, which the fixtures do not hold, follow the Go field: left
 * out under {@code omitempty}, written without it or when a pointer is set.
 */
public class ProtoJsonWriterTest {
    private static final long REVISION = 12345;
    private final ProtoJsonWriter writer = ProtoJsonWriter.create();

    static List<String> fixtures() {
        return KubeFixtures.names();
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    @RequiresKubeFixtures
    void storedProtobufRendersAsKubeApiserversJson(String name) throws Exception {
        byte[] stored = KubeFixtures.protobuf(name);
        StoredObject object = StoredObject.of(stored, 0, stored.length);
        assertThat(object.encoding()).isEqualTo(StoredObject.StorageEncoding.PROTOBUF);
        Descriptor type = KubeSchema.standard()
                .type(object.apiVersion(), object.kind())
                .orElseThrow(() -> new AssertionError("no schema for " + object.apiVersion() + " " + object.kind()));

        JsonBuffer out = new JsonBuffer(256);
        int unknown = writer.writeObject(
                out,
                type,
                object.apiVersion(),
                object.kind(),
                stored,
                object.rawOffset(),
                object.rawLength(),
                REVISION);
        JsonElement ours = JsonParser.parseString(new String(out.array(), 0, out.length(), StandardCharsets.UTF_8));
        JsonObject expected = JsonParser.parseString(KubeFixtures.json(name)).getAsJsonObject();
        expected.getAsJsonObject("metadata").addProperty("resourceVersion", Long.toString(REVISION));

        List<String> wrong = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        compare("", ours, expected, wrong, missing);
        assertThat(wrong).as("fields whose JSON differs from kube-apiserver's").isEmpty();
        if (unknown == 0) {
            assertThat(missing).as("fields missing from the JSON").isEmpty();
        } else {
            assertThat(missing).as("%d fields unknown to the schema", unknown).isNotEmpty();
        }
    }

    @Test
    void emptyScalarsWithoutOmitemptyAreWrittenAsKubeApiserverWritesThem() throws Exception {
        // imageID "" on the wire, as Go marshals it; containerID "" (omitempty) too; restartCount
        // and ready absent from the bytes (not written by Go): Go's JSON has all four but containerID.
        byte[] stored = StoredObjects.protobuf(
                "v1",
                "Pod",
                "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"generateName\":\"\"},"
                        + "\"status\":{\"containerStatuses\":[{\"name\":\"main\",\"image\":\"nginx\","
                        + "\"imageID\":\"\",\"containerID\":\"\"}]}}");
        StoredObject object = StoredObject.of(stored, 0, stored.length);
        Descriptor type = KubeSchema.standard().type("v1", "Pod").orElseThrow();
        JsonBuffer out = new JsonBuffer(256);
        writer.writeObject(out, type, "v1", "Pod", stored, object.rawOffset(), object.rawLength(), 7);
        JsonObject pod = JsonParser.parseString(new String(out.array(), 0, out.length(), StandardCharsets.UTF_8))
                .getAsJsonObject();
        assertThat(pod.getAsJsonObject("metadata").has("generateName")).isFalse();
        JsonObject status = pod.getAsJsonObject("status")
                .getAsJsonArray("containerStatuses")
                .get(0)
                .getAsJsonObject();
        assertThat(status.toString())
                .isEqualTo(
                        "{\"name\":\"main\",\"image\":\"nginx\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0}");
    }

    @Test
    void zeroValuesOfOmitemptyFieldsAreLeftOutAndOthersWritten() throws Exception {
        V1.Pod pod = V1.Pod.newBuilder()
                .setMetadata(Meta.ObjectMeta.newBuilder()
                        .setName("p")
                        .setNamespace("ns")
                        .setGenerateName("")
                        .setGeneration(0))
                .setSpec(V1.PodSpec.newBuilder()
                        .setHostNetwork(false)
                        .setTerminationGracePeriodSeconds(0)
                        .addContainers(V1.Container.newBuilder()
                                .setName("main")
                                .setImage("nginx")
                                .setStdin(false)
                                .addPorts(V1.ContainerPort.newBuilder()
                                        .setContainerPort(0)
                                        .setHostPort(0)
                                        .setName("")
                                        .setProtocol("TCP"))
                                .setLivenessProbe(V1.Probe.newBuilder()
                                        .setHandler(V1.ProbeHandler.newBuilder()
                                                .setGrpc(V1.GRPCAction.newBuilder()
                                                        .setPort(9000)))
                                        .setInitialDelaySeconds(0)
                                        .setPeriodSeconds(10))))
                .setStatus(V1.PodStatus.newBuilder()
                        .setObservedGeneration(0)
                        .setPhase("Pending")
                        .addContainerStatuses(V1.ContainerStatus.newBuilder()
                                .setName("main")
                                .setImage("nginx")
                                .setImageID("")
                                .setContainerID("")
                                .setReady(false)
                                .setRestartCount(0)
                                .setStarted(false)))
                .build();

        JsonObject json = render("v1", "Pod", pod);

        assertThat(json.getAsJsonObject("metadata").keySet())
                .containsExactlyInAnyOrder("name", "namespace", "resourceVersion");
        JsonObject spec = json.getAsJsonObject("spec");
        assertThat(spec.keySet()).containsExactlyInAnyOrder("terminationGracePeriodSeconds", "containers");
        assertThat(spec.get("terminationGracePeriodSeconds").getAsInt()).isZero(); // *int64 set to 0
        JsonObject container = spec.getAsJsonArray("containers").get(0).getAsJsonObject();
        assertThat(container.keySet()).containsExactlyInAnyOrder("name", "image", "ports", "livenessProbe");
        assertThat(container.getAsJsonArray("ports").get(0))
                .isEqualTo(JsonParser.parseString("{\"containerPort\":0,\"protocol\":\"TCP\"}"));
        // GRPCAction.service is a *string without omitempty: null when unset.
        assertThat(container.getAsJsonObject("livenessProbe"))
                .isEqualTo(JsonParser.parseString("{\"grpc\":{\"port\":9000,\"service\":null},\"periodSeconds\":10}"));
        assertThat(json.getAsJsonObject("status").keySet()).containsExactlyInAnyOrder("phase", "containerStatuses");
        assertThat(json.getAsJsonObject("status")
                        .getAsJsonArray("containerStatuses")
                        .get(0))
                .isEqualTo(JsonParser.parseString("{\"name\":\"main\",\"image\":\"nginx\",\"imageID\":\"\","
                        + "\"ready\":false,\"restartCount\":0,\"started\":false}"));
    }

    @Test
    void pointersSetToZeroAreWrittenAndPlainZerosAreNot() throws Exception {
        V1Apps.Deployment deployment = V1Apps.Deployment.newBuilder()
                .setMetadata(Meta.ObjectMeta.newBuilder()
                        .setName("d")
                        .setNamespace("ns")
                        .setGeneration(0))
                .setSpec(V1Apps.DeploymentSpec.newBuilder()
                        .setReplicas(0)
                        .setRevisionHistoryLimit(0)
                        .setMinReadySeconds(0)
                        .setPaused(false))
                .setStatus(V1Apps.DeploymentStatus.newBuilder()
                        .setObservedGeneration(0)
                        .setReplicas(0)
                        .setReadyReplicas(0)
                        .setAvailableReplicas(0))
                .build();

        JsonObject json = render("apps/v1", "Deployment", deployment);

        assertThat(json.getAsJsonObject("metadata").has("generation")).isFalse();
        JsonObject spec = json.getAsJsonObject("spec");
        assertThat(spec.get("replicas").getAsInt()).isZero();
        assertThat(spec.get("revisionHistoryLimit").getAsInt()).isZero();
        assertThat(spec.has("minReadySeconds")).isFalse();
        assertThat(spec.has("paused")).isFalse();
        assertThat(spec.has("progressDeadlineSeconds")).isFalse();
        assertThat(json.get("status")).isEqualTo(new JsonObject()); // on the wire: kept, as "status":{}
    }

    @Test
    void configMapsAndEventsCarryNoZeroGeneration() throws Exception {
        V1.ConfigMap configMap = V1.ConfigMap.newBuilder()
                .setMetadata(Meta.ObjectMeta.newBuilder()
                        .setName("c")
                        .setNamespace("ns")
                        .setGeneration(0))
                .setImmutable(false)
                .putData("k", "")
                .build();
        JsonObject cm = render("v1", "ConfigMap", configMap);
        assertThat(cm.getAsJsonObject("metadata").has("generation")).isFalse();
        assertThat(cm.get("immutable").getAsBoolean()).isFalse(); // *bool set to false
        assertThat(cm.getAsJsonObject("data").get("k").getAsString()).isEmpty(); // a map's value stays

        V1.Event event = V1.Event.newBuilder()
                .setMetadata(Meta.ObjectMeta.newBuilder()
                        .setName("e")
                        .setNamespace("ns")
                        .setGeneration(0))
                .setInvolvedObject(
                        V1.ObjectReference.newBuilder().setKind("Pod").setName("p"))
                .setReason("Started")
                .setCount(0)
                .setReportingComponent("")
                .setReportingInstance("")
                .build();
        JsonObject ev = render("v1", "Event", event);
        assertThat(ev.getAsJsonObject("metadata").has("generation")).isFalse();
        assertThat(ev.has("count")).isFalse();
        // +optional but without omitempty: kube-apiserver writes them empty.
        assertThat(ev.get("reportingComponent").getAsString()).isEmpty();
        assertThat(ev.get("reportingInstance").getAsString()).isEmpty();
    }

    @Test
    void zeroCountersWithoutOmitemptyAreWritten() throws Exception {
        V1Policy.PodDisruptionBudget pdb = V1Policy.PodDisruptionBudget.newBuilder()
                .setMetadata(Meta.ObjectMeta.newBuilder().setName("b").setNamespace("ns"))
                .setStatus(V1Policy.PodDisruptionBudgetStatus.newBuilder()
                        .setObservedGeneration(0)
                        .setDisruptionsAllowed(0)
                        .setCurrentHealthy(0)
                        .setDesiredHealthy(0)
                        .setExpectedPods(0))
                .build();
        assertThat(render("policy/v1", "PodDisruptionBudget", pdb).get("status"))
                .isEqualTo(JsonParser.parseString(
                        "{\"disruptionsAllowed\":0,\"currentHealthy\":0,\"desiredHealthy\":0,\"expectedPods\":0}"));
    }

    @Test
    void emptyBytesAndZeroFloatsFollowTheirGoField() throws Exception {
        V1Admissionregistration.ValidatingWebhookConfiguration webhooks =
                V1Admissionregistration.ValidatingWebhookConfiguration.newBuilder()
                        .setMetadata(Meta.ObjectMeta.newBuilder().setName("w"))
                        .addWebhooks(V1Admissionregistration.ValidatingWebhook.newBuilder()
                                .setName("w.example.com")
                                .setClientConfig(V1Admissionregistration.WebhookClientConfig.newBuilder()
                                        .setUrl("")
                                        .setCaBundle(ByteString.EMPTY))
                                .setSideEffects("None")
                                .setTimeoutSeconds(0))
                        .build();
        JsonObject webhook = render("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", webhooks)
                .getAsJsonArray("webhooks")
                .get(0)
                .getAsJsonObject();
        assertThat(webhook.get("clientConfig")).isEqualTo(JsonParser.parseString("{\"url\":\"\"}"));
        assertThat(webhook.get("timeoutSeconds").getAsInt()).isZero();

        V1Apiextensions.CustomResourceDefinition crd = V1Apiextensions.CustomResourceDefinition.newBuilder()
                .setMetadata(Meta.ObjectMeta.newBuilder().setName("widgets.example.com"))
                .setSpec(V1Apiextensions.CustomResourceDefinitionSpec.newBuilder()
                        .setGroup("example.com")
                        .setScope("Namespaced")
                        .setPreserveUnknownFields(false)
                        .addVersions(V1Apiextensions.CustomResourceDefinitionVersion.newBuilder()
                                .setName("v1")
                                .setServed(false)
                                .setStorage(true)
                                .setDeprecated(false)
                                .setSchema(V1Apiextensions.CustomResourceValidation.newBuilder()
                                        .setOpenAPIV3Schema(V1Apiextensions.JSONSchemaProps.newBuilder()
                                                .setType("integer")
                                                .setMinimum(0.0)
                                                .setNullable(false)))))
                .build();
        JsonObject spec = render("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd)
                .getAsJsonObject("spec");
        assertThat(spec.has("preserveUnknownFields")).isFalse();
        JsonObject version = spec.getAsJsonArray("versions").get(0).getAsJsonObject();
        assertThat(version.get("served").getAsBoolean()).isFalse();
        assertThat(version.has("deprecated")).isFalse();
        assertThat(version.getAsJsonObject("schema").get("openAPIV3Schema"))
                .isEqualTo(JsonParser.parseString("{\"type\":\"integer\",\"minimum\":0}"));
    }

    private JsonObject render(String apiVersion, String kind, com.google.protobuf.Message message)
            throws UndecodableObjectException {
        byte[] stored = StoredObjects.protobuf(apiVersion, kind, message);
        StoredObject object = StoredObject.of(stored, 0, stored.length);
        Descriptor type = KubeSchema.standard().type(apiVersion, kind).orElseThrow();
        JsonBuffer out = new JsonBuffer(256);
        writer.writeObject(out, type, apiVersion, kind, stored, object.rawOffset(), object.rawLength(), 7);
        return JsonParser.parseString(new String(out.array(), 0, out.length(), StandardCharsets.UTF_8))
                .getAsJsonObject();
    }

    public static void compare(
            String path, JsonElement ours, JsonElement expected, List<String> wrong, List<String> missing) {
        if (ours.isJsonObject() && expected.isJsonObject()) {
            JsonObject o = ours.getAsJsonObject();
            JsonObject e = expected.getAsJsonObject();
            for (Map.Entry<String, JsonElement> field : o.entrySet()) {
                if (!e.has(field.getKey())) {
                    wrong.add(
                            path + "/" + field.getKey() + " (not in kube-apiserver's JSON: " + field.getValue() + ")");
                } else {
                    compare(path + "/" + field.getKey(), field.getValue(), e.get(field.getKey()), wrong, missing);
                }
            }
            for (String key : e.keySet()) {
                if (!o.has(key)) {
                    missing.add(path + "/" + key);
                }
            }
        } else if (ours.isJsonArray()
                && expected.isJsonArray()
                && ours.getAsJsonArray().size() == expected.getAsJsonArray().size()) {
            for (int i = 0; i < ours.getAsJsonArray().size(); i++) {
                compare(
                        path + "[" + i + "]",
                        ours.getAsJsonArray().get(i),
                        expected.getAsJsonArray().get(i),
                        wrong,
                        missing);
            }
        } else if (!ours.equals(expected)) {
            wrong.add(path + ": " + ours + " != " + expected);
        }
    }
}
