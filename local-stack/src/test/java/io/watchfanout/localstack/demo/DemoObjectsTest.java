package io.watchfanout.localstack.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Apps;
import io.kubernetes.client.proto.V1Coordination;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DemoObjectsTest {
    private static Struct parse(String json) throws Exception {
        Struct.Builder b = Struct.newBuilder();
        JsonFormat.parser().merge(json, b);
        return b.build();
    }

    private static Struct parse(byte[] json) throws Exception {
        return parse(new String(json, StandardCharsets.UTF_8));
    }

    /** The object of a stored value, after checking its envelope as kube-apiserver writes it. */
    private static <T extends Message> T unwrap(byte[] stored, String apiVersion, String kind, T prototype)
            throws Exception {
        assertThat(Arrays.copyOf(stored, 4)).containsExactly('k', '8', 's', 0);
        Runtime.Unknown unknown =
                typed(Runtime.Unknown.getDefaultInstance(), Arrays.copyOfRange(stored, 4, stored.length));
        assertThat(unknown.getTypeMeta().getApiVersion()).isEqualTo(apiVersion);
        assertThat(unknown.getTypeMeta().getKind()).isEqualTo(kind);
        assertThat(unknown.hasContentEncoding() && unknown.hasContentType())
                .as("contentEncoding and contentType written empty, as Go writes them")
                .isTrue();
        assertThat(unknown.getContentEncoding() + unknown.getContentType()).isEmpty();
        T object = typed(prototype, unknown.getRaw().toByteArray());
        Meta.ObjectMeta meta =
                (Meta.ObjectMeta) object.getField(object.getDescriptorForType().findFieldByName("metadata"));
        assertThat(meta.hasResourceVersion()).as("resourceVersion stored empty").isTrue();
        assertThat(meta.getResourceVersion()).isEmpty();
        assertThat(meta.getName()).isNotEmpty();
        assertThat(meta.getCreationTimestamp().getSeconds()).isPositive();
        return object;
    }

    /** Parsed through the descriptor (no generated parser), every field known to the schema. */
    @SuppressWarnings("unchecked")
    private static <T extends Message> T typed(T prototype, byte[] bytes) throws Exception {
        DynamicMessage message = DynamicMessage.parseFrom(prototype.getDescriptorForType(), bytes);
        assertThat(message.getUnknownFields().asMap()).isEmpty();
        return (T) prototype.newBuilderForType().mergeFrom(message).build();
    }

    @Test
    void builtInObjectsAreProtobufEnvelopesOfKubernetesShapeAndSize() throws Exception {
        DemoObjects.Pod pod = new DemoObjects.Pod("team-a", "web", "7d4b9c8f6d", "web-7d4b9c8f6d-x2k9p", "node-3", 7);
        byte[] pending = DemoObjects.pod(pod);
        pod.started = DemoObjects.now();
        pod.phase = "Running";
        pod.ready = true;
        pod.restarts = 1;
        byte[] running = DemoObjects.pod(pod);
        for (byte[] stored : List.of(pending, running)) {
            V1.Pod p = unwrap(stored, "v1", "Pod", V1.Pod.getDefaultInstance());
            assertThat(p.getMetadata().getNamespace()).isEqualTo("team-a");
            assertThat(p.getMetadata().getLabelsMap()).containsEntry("app", "web");
            assertThat(p.getMetadata().getOwnerReferences(0).getKind()).isEqualTo("ReplicaSet");
            assertThat(p.getSpec().getNodeName()).isEqualTo("node-3");
            assertThat(p.getSpec().getContainersCount()).isEqualTo(2);
        }
        V1.Pod p = unwrap(running, "v1", "Pod", V1.Pod.getDefaultInstance());
        assertThat(p.getStatus().getPhase()).isEqualTo("Running");
        assertThat(p.getStatus().getContainerStatusesList())
                .allSatisfy(c -> assertThat(c.getRestartCount()).isEqualTo(1));
        assertThat(p.getMetadata().getManagedFieldsList())
                .extracting(Meta.ManagedFieldsEntry::getManager)
                .containsExactly("kube-controller-manager", "kubelet");
        assertThat(parse(p.getMetadata()
                                .getManagedFields(1)
                                .getFieldsV1()
                                .getRaw()
                                .toStringUtf8())
                        .containsFields("f:status"))
                .isTrue();
        assertThat(running.length).isBetween(3000, 6000);

        byte[] cm = DemoObjects.configMap("default", "settings-abcde", 3, DemoObjects.now(), new Random(1));
        assertThat(unwrap(cm, "v1", "ConfigMap", V1.ConfigMap.getDefaultInstance())
                        .getDataCount())
                .isEqualTo(3);
        assertThat(cm.length).isBetween(700, 8000);
        assertThat(unwrap(
                                DemoObjects.deployment(
                                        "team-a", "web", "7d4b9c8f6d", 2, 4, DemoObjects.now(), DemoObjects.now()),
                                "apps/v1",
                                "Deployment",
                                V1Apps.Deployment.getDefaultInstance())
                        .getSpec()
                        .getReplicas())
                .isEqualTo(4);
        assertThat(unwrap(
                                DemoObjects.replicaSet("team-a", "web", "7d4b9c8f6d", 2, 0, DemoObjects.now()),
                                "apps/v1",
                                "ReplicaSet",
                                V1Apps.ReplicaSet.getDefaultInstance())
                        .getMetadata()
                        .getName())
                .isEqualTo("web-7d4b9c8f6d");
        Instant renew = Instant.parse("2026-01-02T03:04:05.123456789Z");
        Meta.MicroTime renewTime = unwrap(
                        DemoObjects.nodeLease("node-1", renew, renew),
                        "coordination.k8s.io/v1",
                        "Lease",
                        V1Coordination.Lease.getDefaultInstance())
                .getSpec()
                .getRenewTime();
        assertThat(renewTime.getSeconds()).isEqualTo(renew.getEpochSecond());
        assertThat(renewTime.getNanos()).as("microseconds").isEqualTo(123_456_000);
        assertThat(unwrap(
                                DemoObjects.event("team-a", "web-x.1", pod, "Pulled", "ok", "Normal"),
                                "v1",
                                "Event",
                                V1.Event.getDefaultInstance())
                        .getReason())
                .isEqualTo("Pulled");
        V1.Node node = unwrap(DemoObjects.node("node-2", renew, renew), "v1", "Node", V1.Node.getDefaultInstance());
        assertThat(node.getMetadata().getNamespace()).isEmpty();
        assertThat(node.getStatus().getConditionsList())
                .filteredOn(c -> c.getType().equals("Ready"))
                .singleElement()
                .satisfies(
                        c -> assertThat(c.getLastHeartbeatTime().getSeconds()).isEqualTo(renew.getEpochSecond()));
        assertThat(unwrap(DemoObjects.namespace("team-b", renew), "v1", "Namespace", V1.Namespace.getDefaultInstance())
                        .getStatus()
                        .getPhase())
                .isEqualTo("Active");
    }

    @Test
    void theDefinitionAndItsBackupsAreJsonAsKubeApiserverStoresThem() throws Exception {
        Struct crd = parse(CustomObjects.definition(Instant.parse("2026-01-01T00:00:00Z")));
        assertThat(crd.getFieldsOrThrow("apiVersion").getStringValue()).isEqualTo("apiextensions.k8s.io/v1beta1");
        Struct spec = crd.getFieldsOrThrow("spec").getStructValue();
        assertThat(spec.getFieldsOrThrow("group").getStringValue()).isEqualTo("demo.example.com");
        assertThat(spec.getFieldsOrThrow("additionalPrinterColumns")
                        .getListValue()
                        .getValuesList())
                .extracting(v -> v.getStructValue().getFieldsOrThrow("JSONPath").getStringValue())
                .contains(".spec.database", ".status.phase");
        assertThat(CustomObjects.definitionKey("/registry"))
                .isEqualTo("/registry/apiextensions.k8s.io/customresourcedefinitions/backups.demo.example.com");

        Instant done = Instant.parse("2026-01-02T03:04:05Z");
        Struct backup = parse(CustomObjects.backup(
                "team-a", "orders-db", "postgres://orders", "0 * * * *", done, 1, "Succeeded", done, 1234));
        assertThat(backup.getFieldsOrThrow("apiVersion").getStringValue()).isEqualTo("demo.example.com/v1");
        Struct status = backup.getFieldsOrThrow("status").getStructValue();
        assertThat(status.getFieldsOrThrow("phase").getStringValue()).isEqualTo("Succeeded");
        assertThat(status.getFieldsOrThrow("lastSuccessTime").getStringValue()).isEqualTo("2026-01-02T03:04:05Z");
        assertThat(CustomObjects.backupKey("/registry", "team-a", "orders-db"))
                .isEqualTo("/registry/demo.example.com/backups/team-a/orders-db");
    }

    @Test
    void stringsAreEscaped() throws Exception {
        String tricky = "quote \" backslash \\ newline \n tab \t bell \u0007 unicode \u00e9";
        String json = new Json()
                .beginObject()
                .field("s", tricky)
                .name("a")
                .beginArray()
                .value(1)
                .value(true)
                .raw("null")
                .endArray()
                .endObject()
                .toString();
        Struct s = parse(json);
        assertThat(s.getFieldsOrThrow("s").getStringValue()).isEqualTo(tricky);
        assertThat(s.getFieldsOrThrow("a").getListValue().getValuesList())
                .extracting(Value::getKindCase)
                .containsExactly(Value.KindCase.NUMBER_VALUE, Value.KindCase.BOOL_VALUE, Value.KindCase.NULL_VALUE);
    }
}
