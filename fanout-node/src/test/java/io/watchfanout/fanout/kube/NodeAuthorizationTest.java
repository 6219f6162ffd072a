package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.watchfanout.fanout.security.NodeAuthorizer;
import io.watchfanout.fanout.security.NodeAuthorizer.Decision;
import io.watchfanout.fanout.security.NodeGraph;
import io.watchfanout.fanout.security.Rbac;
import io.watchfanout.kube.codec.KubeFixtures;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Node authorizer over the graph of stored pods: a kubelet reads its own Node and Lease, the
 * pods bound to it and what they reference, and the graph follows pod changes.
 */
class NodeAuthorizationTest {
    private static final String NODE = "system:node:node-1";

    @Test
    void aStoredPodLinksEveryReferenceKubeApiserversGraphKnows() throws Exception {
        NodeGraph.PodLinks links = PodReferences.of(KubeFixtures.protobuf("core.v1.Pod"));
        assertThat(links.node()).isEqualTo("nodeNameValue");
        assertThat(links.secrets()).contains("secretNameValue", "nameValue");
        assertThat(links.configMaps()).contains("nameValue");
        assertThat(links.claims()).contains("claimNameValue");
    }

    @Test
    void aPodStoredAsJsonLinksTheSameReferences() throws Exception {
        NodeGraph.PodLinks fromJson =
                PodReferences.of(KubeFixtures.json("core.v1.Pod").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        NodeGraph.PodLinks fromProtobuf = PodReferences.of(KubeFixtures.protobuf("core.v1.Pod"));
        assertThat(fromJson.node()).isEqualTo(fromProtobuf.node());
        assertThat(fromJson.secrets()).containsExactlyInAnyOrderElementsOf(fromProtobuf.secrets());
        assertThat(fromJson.configMaps()).containsExactlyInAnyOrderElementsOf(fromProtobuf.configMaps());
        assertThat(fromJson.claims()).containsExactlyInAnyOrderElementsOf(fromProtobuf.claims());
        assertThatThrownBy(() ->
                        PodReferences.of("{\"kind\":\"Secret\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isInstanceOf(io.watchfanout.kube.codec.UndecodableObjectException.class);
    }

    @Test
    void aKubeletSeesItsOwnPodsAndWhatTheyReferenceAndTheGraphFollowsPodChanges() {
        NodeGraph graph = new NodeGraph();
        NodeAuthorizer node = new NodeAuthorizer(graph);
        graph.pod("shop", "web-0", NodeGraph.links("node-1", List.of("db-password"), List.of("settings"), List.of()));
        graph.pod("shop", "web-1", NodeGraph.links("node-2", List.of("api-key"), List.of(), List.of("data")));

        assertThat(node.decide(get(NODE, "", "secrets", "shop", "db-password"), null))
                .isEqualTo(Decision.ALLOW);
        assertThat(node.decide(get(NODE, "", "configmaps", "shop", "settings"), null))
                .isEqualTo(Decision.ALLOW);
        assertThat(node.decide(get(NODE, "", "secrets", "shop", "api-key"), null))
                .isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(get(NODE, "", "persistentvolumeclaims", "shop", "data"), null))
                .isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(get(NODE, "", "pods", "shop", "web-0"), null)).isEqualTo(Decision.ALLOW);
        assertThat(node.decide(get(NODE, "", "pods", "shop", "web-1"), null)).isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(request(NODE, "watch", "", "pods", "", ""), "node-1"))
                .isEqualTo(Decision.ALLOW);
        assertThat(node.decide(request(NODE, "watch", "", "pods", "", ""), "node-2"))
                .isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(request(NODE, "list", "", "secrets", "shop", ""), null))
                .isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(get(NODE, "", "nodes", "", "node-1"), null)).isEqualTo(Decision.ALLOW);
        assertThat(node.decide(get(NODE, "", "nodes", "", "node-2"), null)).isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(get(NODE, "coordination.k8s.io", "leases", "kube-node-lease", "node-1"), null))
                .isEqualTo(Decision.ALLOW);

        // A new pod that references another Secret makes it readable; moving the pod away removes it.
        graph.pod("shop", "web-2", NodeGraph.links("node-1", List.of("api-key"), List.of(), List.of()));
        assertThat(node.decide(get(NODE, "", "secrets", "shop", "api-key"), null))
                .isEqualTo(Decision.ALLOW);
        graph.pod("shop", "web-2", NodeGraph.links("node-3", List.of("api-key"), List.of(), List.of()));
        assertThat(node.decide(get(NODE, "", "secrets", "shop", "api-key"), null))
                .isEqualTo(Decision.NO_OPINION);
        graph.pod("shop", "web-0", null);
        assertThat(node.decide(get(NODE, "", "secrets", "shop", "db-password"), null))
                .isEqualTo(Decision.NO_OPINION);
        assertThat(graph.pods()).isEqualTo(2);
    }

    @Test
    void otherUsersAndWritesGetNoOpinion() {
        NodeGraph graph = new NodeGraph();
        graph.pod("shop", "web-0", NodeGraph.links("node-1", List.of("db-password"), List.of(), List.of()));
        NodeAuthorizer node = new NodeAuthorizer(graph);
        Rbac.Request notANode = new Rbac.Request(
                "system:node:node-1",
                List.of("system:authenticated"),
                "get",
                "",
                "secrets",
                "",
                "shop",
                "db-password",
                "",
                true);
        assertThat(node.decide(notANode, null)).isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(get("jane", "", "secrets", "shop", "db-password"), null))
                .isEqualTo(Decision.NO_OPINION);
        assertThat(node.decide(request(NODE, "delete", "", "secrets", "shop", "db-password"), null))
                .isEqualTo(Decision.NO_OPINION);
    }

    private static Rbac.Request get(String user, String group, String resource, String ns, String name) {
        return new Rbac.Request(
                user, List.of("system:nodes", "system:authenticated"), "get", group, resource, "", ns, name, "", true);
    }

    private static Rbac.Request request(
            String user, String verb, String group, String resource, String ns, String name) {
        return new Rbac.Request(
                user, List.of("system:nodes", "system:authenticated"), verb, group, resource, "", ns, name, "", true);
    }
}
