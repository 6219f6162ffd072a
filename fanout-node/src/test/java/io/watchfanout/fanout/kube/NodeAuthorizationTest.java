package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.proto.V1;
import io.watchfanout.fanout.kube.authz.NodeAuthorizer;
import io.watchfanout.fanout.kube.authz.NodeAuthorizer.Decision;
import io.watchfanout.fanout.kube.authz.NodeGraph;
import io.watchfanout.fanout.kube.authz.PodReferences;
import io.watchfanout.fanout.security.RequestAttributes;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.charset.StandardCharsets;
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
        assertLinks(PodReferences.of(StorageEnvelope.wrap("v1", "Pod", referencingPod())));
    }

    @Test
    void aPodStoredAsJsonLinksTheSameReferences() throws Exception {
        assertLinks(PodReferences.of(REFERENCING_POD_JSON.getBytes(StandardCharsets.UTF_8)));
        assertThatThrownBy(() -> PodReferences.of("{\"kind\":\"Secret\"}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(UndecodableObjectException.class);
    }

    private static void assertLinks(NodeGraph.PodLinks links) {
        assertThat(links.node()).isEqualTo("node-1");
        assertThat(links.secrets())
                .containsExactlyInAnyOrder(
                        "registry-login",
                        "tls",
                        "projected-secret",
                        "csi-login",
                        "db-password",
                        "api-keys",
                        "init-secret");
        assertThat(links.configMaps())
                .containsExactlyInAnyOrder(
                        "settings", "projected-settings", "feature-flags", "env-settings", "debug-settings");
        assertThat(links.claims()).containsExactly("data");
    }

    /**
     * A pod referencing Secrets and ConfigMaps in every place kube-apiserver's graph looks: image
     * pull secrets, volumes (projected and CSI too), env and envFrom of a container, an init
     * container and an ephemeral container; and a claim.
     */
    private static V1.Pod referencingPod() {
        V1.PodSpec.Builder spec = V1.PodSpec.newBuilder()
                .setNodeName("node-1")
                .addImagePullSecrets(ref("registry-login"))
                .addVolumes(volume(
                        "tls",
                        V1.VolumeSource.newBuilder()
                                .setSecret(V1.SecretVolumeSource.newBuilder().setSecretName("tls"))))
                .addVolumes(volume(
                        "settings",
                        V1.VolumeSource.newBuilder()
                                .setConfigMap(V1.ConfigMapVolumeSource.newBuilder()
                                        .setLocalObjectReference(ref("settings")))))
                .addVolumes(volume(
                        "projected",
                        V1.VolumeSource.newBuilder()
                                .setProjected(V1.ProjectedVolumeSource.newBuilder()
                                        .addSources(V1.VolumeProjection.newBuilder()
                                                .setSecret(V1.SecretProjection.newBuilder()
                                                        .setLocalObjectReference(ref("projected-secret"))))
                                        .addSources(V1.VolumeProjection.newBuilder()
                                                .setConfigMap(V1.ConfigMapProjection.newBuilder()
                                                        .setLocalObjectReference(ref("projected-settings")))))))
                .addVolumes(volume(
                        "data",
                        V1.VolumeSource.newBuilder()
                                .setPersistentVolumeClaim(V1.PersistentVolumeClaimVolumeSource.newBuilder()
                                        .setClaimName("data"))))
                .addVolumes(volume(
                        "csi",
                        V1.VolumeSource.newBuilder()
                                .setCsi(V1.CSIVolumeSource.newBuilder()
                                        .setDriver("csi.example.com")
                                        .setNodePublishSecretRef(ref("csi-login")))))
                .addContainers(V1.Container.newBuilder()
                        .setName("main")
                        .setImage("shop:1")
                        .addEnv(V1.EnvVar.newBuilder()
                                .setName("DB_PASSWORD")
                                .setValueFrom(V1.EnvVarSource.newBuilder()
                                        .setSecretKeyRef(V1.SecretKeySelector.newBuilder()
                                                .setLocalObjectReference(ref("db-password"))
                                                .setKey("password"))))
                        .addEnv(V1.EnvVar.newBuilder()
                                .setName("FLAGS")
                                .setValueFrom(V1.EnvVarSource.newBuilder()
                                        .setConfigMapKeyRef(V1.ConfigMapKeySelector.newBuilder()
                                                .setLocalObjectReference(ref("feature-flags"))
                                                .setKey("flags"))))
                        .addEnvFrom(V1.EnvFromSource.newBuilder()
                                .setSecretRef(V1.SecretEnvSource.newBuilder().setLocalObjectReference(ref("api-keys"))))
                        .addEnvFrom(V1.EnvFromSource.newBuilder()
                                .setConfigMapRef(V1.ConfigMapEnvSource.newBuilder()
                                        .setLocalObjectReference(ref("env-settings")))))
                .addInitContainers(V1.Container.newBuilder()
                        .setName("init")
                        .setImage("shop:1")
                        .addEnv(V1.EnvVar.newBuilder()
                                .setName("INIT")
                                .setValueFrom(V1.EnvVarSource.newBuilder()
                                        .setSecretKeyRef(V1.SecretKeySelector.newBuilder()
                                                .setLocalObjectReference(ref("init-secret"))
                                                .setKey("k")))))
                .addEphemeralContainers(V1.EphemeralContainer.newBuilder()
                        .setEphemeralContainerCommon(V1.EphemeralContainerCommon.newBuilder()
                                .setName("debug")
                                .setImage("busybox")
                                .addEnvFrom(V1.EnvFromSource.newBuilder()
                                        .setConfigMapRef(V1.ConfigMapEnvSource.newBuilder()
                                                .setLocalObjectReference(ref("debug-settings"))))));
        return V1.Pod.newBuilder()
                .setMetadata(StoredObjects.meta("shop", "web-0"))
                .setSpec(spec)
                .build();
    }

    /** {@link #referencingPod()} as kube-apiserver writes it in JSON: embedded Go structs inlined. */
    private static final String REFERENCING_POD_JSON = """
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"},
             "spec": {
              "nodeName": "node-1",
              "imagePullSecrets": [{"name": "registry-login"}],
              "volumes": [
               {"name": "tls", "secret": {"secretName": "tls"}},
               {"name": "settings", "configMap": {"name": "settings"}},
               {"name": "projected", "projected": {"sources": [
                {"secret": {"name": "projected-secret"}}, {"configMap": {"name": "projected-settings"}}]}},
               {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
               {"name": "csi", "csi": {"driver": "csi.example.com", "nodePublishSecretRef": {"name": "csi-login"}}}],
              "containers": [{"name": "main", "image": "shop:1",
               "env": [
                {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db-password", "key": "password"}}},
                {"name": "FLAGS", "valueFrom": {"configMapKeyRef": {"name": "feature-flags", "key": "flags"}}}],
               "envFrom": [{"secretRef": {"name": "api-keys"}}, {"configMapRef": {"name": "env-settings"}}]}],
              "initContainers": [{"name": "init", "image": "shop:1",
               "env": [{"name": "INIT", "valueFrom": {"secretKeyRef": {"name": "init-secret", "key": "k"}}}]}],
              "ephemeralContainers": [{"name": "debug", "image": "busybox",
               "envFrom": [{"configMapRef": {"name": "debug-settings"}}]}]}}
            """;

    private static V1.LocalObjectReference ref(String name) {
        return V1.LocalObjectReference.newBuilder().setName(name).build();
    }

    private static V1.Volume volume(String name, V1.VolumeSource.Builder source) {
        return V1.Volume.newBuilder().setName(name).setVolumeSource(source).build();
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
        RequestAttributes notANode = new RequestAttributes(
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

    private static RequestAttributes get(String user, String group, String resource, String ns, String name) {
        return new RequestAttributes(
                user, List.of("system:nodes", "system:authenticated"), "get", group, resource, "", ns, name, "", true);
    }

    private static RequestAttributes request(
            String user, String verb, String group, String resource, String ns, String name) {
        return new RequestAttributes(
                user, List.of("system:nodes", "system:authenticated"), verb, group, resource, "", ns, name, "", true);
    }
}
