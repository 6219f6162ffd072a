package io.watchfanout.kube.codec.table;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** kubectl's tables with kube-apiserver's printer columns. */
class KubeTableTest {
    private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");
    private final KubeResources resources = KubeResources.builtIn("/registry");

    @Test
    void podRowShowsReadinessStatusRestartsAndWideColumns() {
        JsonObject pod = json("""
                {"metadata":{"name":"web-0","creationTimestamp":"2026-12-06T11:55:00Z","resourceVersion":"7"},
                 "spec":{"nodeName":"node-1","containers":[{"name":"a"},{"name":"b"}]},
                 "status":{"phase":"Running","podIP":"10.0.0.5",
                   "conditions":[{"type":"Ready","status":"False"}],
                   "containerStatuses":[
                     {"name":"a","ready":true,"restartCount":2,"state":{"running":{}},
                      "lastState":{"terminated":{"finishedAt":"2026-12-06T11:58:00Z"}}},
                     {"name":"b","ready":false,"restartCount":1,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}""");
        JsonArray cells = KubeTable.cells(pods(), pod, NOW);
        assertThat(cells.toString())
                .isEqualTo(
                        "[\"web-0\",\"1/2\",\"CrashLoopBackOff\",\"3 (2m ago)\",\"5m\",\"10.0.0.5\",\"node-1\",\"<none>\",\"<none>\"]");
    }

    @Test
    void podStatusFollowsInitContainersAndDeletion() {
        JsonObject initializing = json("""
                {"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i"}],"containers":[{"name":"c"}]},
                 "status":{"phase":"Pending","initContainerStatuses":[{"name":"i","state":{"running":{}}}]}}""");
        assertThat(KubeTable.cells(pods(), initializing, NOW).get(2).getAsString())
                .isEqualTo("Init:0/1");
        JsonObject deleting = json("""
                {"metadata":{"name":"p","deletionTimestamp":"2026-12-06T11:59:00Z"},"spec":{"containers":[{"name":"c"}]},
                 "status":{"phase":"Running","containerStatuses":[{"name":"c","ready":true,"state":{"running":{}}}]}}""");
        assertThat(KubeTable.cells(pods(), deleting, NOW).get(2).getAsString()).isEqualTo("Terminating");
    }

    @Test
    void nodeServiceDeploymentNamespaceEventAndGenericRows() {
        JsonObject node = json("""
                {"metadata":{"name":"n1","creationTimestamp":"2026-12-01T12:00:00Z",
                   "labels":{"node-role.kubernetes.io/control-plane":""}},
                 "spec":{"unschedulable":true},
                 "status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.32.1"},
                   "addresses":[{"type":"InternalIP","address":"192.0.2.1"}]}}""");
        assertThat(cells("nodes", node).subList(0, 6))
                .containsExactly("n1", "Ready,SchedulingDisabled", "control-plane", "5d", "v1.32.1", "192.0.2.1");
        JsonObject service = json("""
                {"metadata":{"name":"s"},"spec":{"type":"NodePort","clusterIP":"10.96.0.10",
                   "ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},{"port":53,"protocol":"UDP"}],
                   "selector":{"app":"web"}}}""");
        assertThat(cells("services", service))
                .containsExactly(
                        "s", "NodePort", "10.96.0.10", "<none>", "80:30080/TCP,53/UDP", "<unknown>", "app=web");
        JsonObject deployment = json("""
                {"metadata":{"name":"d"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"d"}},
                   "template":{"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}},
                 "status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}""");
        JsonArray d =
                KubeTable.cells(resources.byPlural("apps", "v1", "deployments").orElseThrow(), deployment, NOW);
        assertThat(d.toString()).isEqualTo("[\"d\",\"2/3\",3,2,\"<unknown>\",\"c\",\"nginx:1\",\"app=d\"]");
        assertThat(cells("namespaces", json("{\"metadata\":{\"name\":\"ns\"},\"status\":{\"phase\":\"Active\"}}")))
                .containsExactly("ns", "Active", "<unknown>");
        JsonObject event = json("""
                {"metadata":{"name":"e1"},"type":"Warning","reason":"BackOff","message":"Back-off ",
                 "involvedObject":{"kind":"Pod","name":"web-0"},"lastTimestamp":"2026-12-06T11:59:30Z","count":4}""");
        assertThat(cells("events", event).subList(0, 5))
                .containsExactly("30s", "Warning", "BackOff", "pod/web-0", "Back-off");
        assertThat(cells(
                        "podtemplates",
                        json("{\"metadata\":{\"name\":\"c\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"}}")))
                .containsExactly("c", "2026-01-01T00:00:00Z");
    }

    @Test
    void listTableCarriesColumnsRowsAndPartialObjectMetadata() {
        JsonObject pod = json("{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\"},\"spec\":{\"containers\":[]}}");
        JsonObject table = JsonParser.parseString(
                        new String(KubeTable.list(pods(), List.of(pod), 9, "next", 3, NOW), StandardCharsets.UTF_8))
                .getAsJsonObject();
        assertThat(table.get("kind").getAsString()).isEqualTo("Table");
        assertThat(table.get("apiVersion").getAsString()).isEqualTo("meta.k8s.io/v1");
        assertThat(table.getAsJsonObject("metadata").get("continue").getAsString())
                .isEqualTo("next");
        assertThat(table.getAsJsonArray("columnDefinitions")).hasSize(9);
        JsonObject row = table.getAsJsonArray("rows").get(0).getAsJsonObject();
        assertThat(row.getAsJsonArray("cells")).hasSize(9);
        assertThat(row.getAsJsonObject("object").get("kind").getAsString()).isEqualTo("PartialObjectMetadata");
    }

    @Test
    void agesAreWrittenAsKubectlWritesThem() {
        assertThat(HumanDuration.format(Duration.ofSeconds(45))).isEqualTo("45s");
        assertThat(HumanDuration.format(Duration.ofSeconds(150))).isEqualTo("2m30s");
        assertThat(HumanDuration.format(Duration.ofMinutes(15))).isEqualTo("15m");
        assertThat(HumanDuration.format(Duration.ofMinutes(185))).isEqualTo("3h5m");
        assertThat(HumanDuration.format(Duration.ofHours(20))).isEqualTo("20h");
        assertThat(HumanDuration.format(Duration.ofHours(76))).isEqualTo("3d4h");
        assertThat(HumanDuration.format(Duration.ofDays(200))).isEqualTo("200d");
        assertThat(HumanDuration.format(Duration.ofDays(760))).isEqualTo("2y30d");
        assertThat(HumanDuration.format(Duration.ofSeconds(-5))).isEqualTo("<invalid>");
    }

    @Test
    void dateColumnsOfCustomResourcesAreAgesAsKubeApiserverWritesThem() {
        java.time.Instant now = java.time.Instant.parse("2026-12-06T00:00:00Z");
        assertThat(KubeTable.dateCell(new com.google.gson.JsonPrimitive("2026-12-04T22:00:00Z"), now)
                        .getAsString())
                .isEqualTo("26h");
        assertThat(KubeTable.dateCell(new com.google.gson.JsonPrimitive("yesterday"), now)
                        .getAsString())
                .isEqualTo("<invalid>");
        assertThat(KubeTable.dateCell(new com.google.gson.JsonPrimitive(7), now).getAsInt())
                .isEqualTo(7);
    }

    @Test
    void configMapSecretServiceAccountLeaseReplicaSetAndStatefulSetRows() {
        String meta = "\"metadata\":{\"name\":\"x\",\"creationTimestamp\":\"2026-12-05T00:00:00Z\"}";
        assertThat(cells(
                        "configmaps",
                        json("{" + meta + ",\"data\":{\"a\":\"1\",\"b\":\"2\"},\"binaryData\":{\"c\":\"AA==\"}}")))
                .containsExactly("x", "3", "36h");
        assertThat(cells("secrets", json("{" + meta + ",\"type\":\"Opaque\",\"data\":{\"k\":\"dg==\"}}")))
                .containsExactly("x", "Opaque", "1", "36h");
        assertThat(cells("serviceaccounts", json("{" + meta + ",\"secrets\":[{\"name\":\"t\"}]}")))
                .containsExactly("x", "1", "36h");
        assertThat(cells("leases", json("{" + meta + ",\"spec\":{\"holderIdentity\":\"node-1\"}}")))
                .containsExactly("x", "node-1", "36h");
        String template = "\"template\":{\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1\"}]}}";
        assertThat(cells(
                        "replicasets",
                        json("{" + meta + ",\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
                                + template + "},\"status\":{\"replicas\":3,\"readyReplicas\":2}}")))
                .containsExactly("x", "3", "3", "2", "36h", "web", "nginx:1", "app=web");
        assertThat(cells(
                        "statefulsets",
                        json("{" + meta + ",\"spec\":{\"replicas\":2," + template
                                + "},\"status\":{\"readyReplicas\":1}}")))
                .containsExactly("x", "1/2", "36h", "web", "nginx:1");
    }

    private KubeResource pods() {
        return resources.byPlural("", "v1", "pods").orElseThrow();
    }

    private List<String> cells(String plural, JsonObject object) {
        KubeResource r = resources.all().stream()
                .filter(x -> x.plural().equals(plural))
                .findFirst()
                .orElseThrow();
        return KubeTable.cells(r, object, NOW).asList().stream()
                .map(e -> e.getAsString())
                .toList();
    }

    private static JsonObject json(String text) {
        return JsonParser.parseString(text).getAsJsonObject();
    }
}
