package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Rbac;
import io.watchfanout.fanout.kube.authz.Rbac;
import io.watchfanout.fanout.kube.authz.RbacObjects;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Stored RBAC objects read into the authorizer's records, from protobuf and from JSON. */
class RbacObjectsTest {
    private static final String RBAC = "rbac.authorization.k8s.io/v1";
    private static final V1Rbac.PolicyRule READ_PODS = V1Rbac.PolicyRule.newBuilder()
            .addVerbs("get")
            .addVerbs("list")
            .addApiGroups("")
            .addResources("pods")
            .addResourceNames("web-0")
            .build();
    private static final V1Rbac.PolicyRule HEALTHZ = V1Rbac.PolicyRule.newBuilder()
            .addVerbs("get")
            .addNonResourceURLs("/healthz")
            .build();
    /** The same rules as kube-apiserver writes them in JSON. */
    private static final String RULES_JSON =
            "\"rules\":[{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
                    + "\"resourceNames\":[\"web-0\"]},{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/healthz\"]}]";

    @Test
    void rolesAndBindingsAsKubeApiserverStoresThem() throws Exception {
        for (byte[] role : List.of(role(), clusterRole())) {
            assertThat(RbacObjects.rules(role))
                    .containsExactly(
                            new Rbac.Rule(Set.of("get", "list"), Set.of(""), Set.of("pods"), Set.of("web-0"), Set.of()),
                            new Rbac.Rule(Set.of("get"), Set.of(), Set.of(), Set.of(), Set.of("/healthz")));
        }
        Rbac.Binding binding = RbacObjects.binding(roleBinding(), "shop", "readers");
        assertThat(binding.namespace()).isEqualTo("shop");
        assertThat(binding.roleKind()).isEqualTo("Role");
        assertThat(binding.roleName()).isEqualTo("pod-reader");
        assertThat(binding.subjects())
                .containsExactly(
                        new Rbac.Subject("User", "jane", ""), new Rbac.Subject("ServiceAccount", "robot", "shop"));
        Rbac.Binding cluster = RbacObjects.binding(clusterRoleBinding(), "", "health");
        assertThat(cluster.namespace()).isEmpty();
        assertThat(cluster.roleKind()).isEqualTo("ClusterRole");
        assertThat(cluster.subjects()).containsExactly(new Rbac.Subject("Group", "system:authenticated", ""));
    }

    @Test
    void rolesAndBindingsStoredAsJson() throws Exception {
        assertThat(RbacObjects.rules(json("{\"apiVersion\":\"" + RBAC + "\",\"kind\":\"Role\","
                        + "\"metadata\":{\"name\":\"pod-reader\",\"namespace\":\"shop\"}," + RULES_JSON + "}")))
                .isEqualTo(RbacObjects.rules(role()));
        assertThat(RbacObjects.rules(json("{\"apiVersion\":\"" + RBAC + "\",\"kind\":\"ClusterRole\","
                        + "\"metadata\":{\"name\":\"pod-reader\"}," + RULES_JSON + "}")))
                .isEqualTo(RbacObjects.rules(clusterRole()));
        assertThat(RbacObjects.binding(
                        json("{\"apiVersion\":\"" + RBAC + "\",\"kind\":\"RoleBinding\","
                                + "\"metadata\":{\"name\":\"readers\",\"namespace\":\"shop\"},"
                                + "\"subjects\":[{\"kind\":\"User\",\"apiGroup\":\"rbac.authorization.k8s.io\","
                                + "\"name\":\"jane\"},{\"kind\":\"ServiceAccount\",\"name\":\"robot\","
                                + "\"namespace\":\"shop\"}],\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
                                + "\"kind\":\"Role\",\"name\":\"pod-reader\"}}"),
                        "shop",
                        "readers"))
                .isEqualTo(RbacObjects.binding(roleBinding(), "shop", "readers"));
        // A binding as kubectl would write it, with a subject of no namespace.
        Rbac.Binding written = RbacObjects.binding(
                ("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
                                + "\"metadata\":{\"name\":\"v\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
                                + "\"kind\":\"ClusterRole\",\"name\":\"view\"},\"subjects\":[{\"kind\":\"Group\","
                                + "\"name\":\"viewers\"}]}")
                        .getBytes(StandardCharsets.UTF_8),
                "",
                "v");
        assertThat(written.roleName()).isEqualTo("view");
        assertThat(written.subjects()).containsExactly(new Rbac.Subject("Group", "viewers", ""));
        assertThatThrownBy(() -> RbacObjects.rules("{\"kind\":\"Role\",\"rules\":{}}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(UndecodableObjectException.class)
                .hasMessageContaining("rules");
    }

    @Test
    void theUidServiceAccountTokensAreCheckedAgainstIsReadFromProtobufAndJson() throws Exception {
        byte[] serviceAccount = StorageEnvelope.wrap(
                "v1",
                "ServiceAccount",
                V1.ServiceAccount.newBuilder()
                        .setMetadata(StoredObjects.meta("shop", "robot"))
                        .build());
        assertThat(KubeObjects.uidOf(serviceAccount)).isEqualTo("uid-robot");
        assertThat(KubeObjects.uidOf(StoredObjects.pod("shop", "web-0", "node-1", "Running", "web")))
                .isEqualTo("uid-web-0");
        assertThat(KubeObjects.uidOf(json("{\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\",\"uid\":\"u-1\"}}")))
                .isEqualTo("u-1");
        assertThatThrownBy(() -> KubeObjects.uidOf(json("k8s:enc:kms:v2:x:y")))
                .isInstanceOf(UndecodableObjectException.class);
    }

    @Test
    void theTokenOfALegacyServiceAccountSecretIsReadFromProtobufAndJson() throws Exception {
        byte[] token = "abc".getBytes(StandardCharsets.UTF_8);
        byte[] secret = StoredObjects.secret("shop", "robot-token", "token", token);
        assertThat(KubeObjects.dataEntry(secret, "token")).isEqualTo(token);
        assertThat(KubeObjects.dataEntry(json("{\"kind\":\"Secret\",\"data\":{\"token\":\"YWJj\"}}"), "token"))
                .isEqualTo(token);
        assertThat(KubeObjects.dataEntry(secret, "ca.crt")).isNull();
        assertThat(KubeObjects.dataEntry(json("{\"kind\":\"Secret\",\"data\":{\"token\":\"YWJj\"}}"), "ca.crt"))
                .isNull();
    }

    @Test
    void anotherKindIsRefused() {
        assertThatThrownBy(() -> RbacObjects.rules(StoredObjects.pod("shop", "web-0", "node-1", "Running", "web")))
                .isInstanceOf(UndecodableObjectException.class)
                .hasMessageContaining("Pod");
    }

    private static byte[] role() {
        return StorageEnvelope.wrap(
                RBAC,
                "Role",
                V1Rbac.Role.newBuilder()
                        .setMetadata(StoredObjects.meta("shop", "pod-reader"))
                        .addRules(READ_PODS)
                        .addRules(HEALTHZ)
                        .build());
    }

    private static byte[] clusterRole() {
        return StorageEnvelope.wrap(
                RBAC,
                "ClusterRole",
                V1Rbac.ClusterRole.newBuilder()
                        .setMetadata(StoredObjects.meta("", "pod-reader"))
                        .addRules(READ_PODS)
                        .addRules(HEALTHZ)
                        .build());
    }

    private static byte[] roleBinding() {
        return StorageEnvelope.wrap(
                RBAC,
                "RoleBinding",
                V1Rbac.RoleBinding.newBuilder()
                        .setMetadata(StoredObjects.meta("shop", "readers"))
                        .addSubjects(V1Rbac.Subject.newBuilder()
                                .setKind("User")
                                .setApiGroup("rbac.authorization.k8s.io")
                                .setName("jane"))
                        .addSubjects(V1Rbac.Subject.newBuilder()
                                .setKind("ServiceAccount")
                                .setName("robot")
                                .setNamespace("shop"))
                        .setRoleRef(V1Rbac.RoleRef.newBuilder()
                                .setApiGroup("rbac.authorization.k8s.io")
                                .setKind("Role")
                                .setName("pod-reader"))
                        .build());
    }

    private static byte[] clusterRoleBinding() {
        return StorageEnvelope.wrap(
                RBAC,
                "ClusterRoleBinding",
                V1Rbac.ClusterRoleBinding.newBuilder()
                        .setMetadata(StoredObjects.meta("", "health"))
                        .addSubjects(V1Rbac.Subject.newBuilder()
                                .setKind("Group")
                                .setApiGroup("rbac.authorization.k8s.io")
                                .setName("system:authenticated"))
                        .setRoleRef(V1Rbac.RoleRef.newBuilder()
                                .setApiGroup("rbac.authorization.k8s.io")
                                .setKind("ClusterRole")
                                .setName("pod-reader"))
                        .build());
    }

    private static byte[] json(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
