package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.watchfanout.fanout.security.Rbac;
import io.watchfanout.kube.codec.KubeFixtures;
import io.watchfanout.kube.codec.UndecodableObjectException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stored RBAC objects read into the authorizer's records. */
class RbacObjectsTest {
    @Test
    void rolesAndBindingsAsKubeApiserverStoresThem() throws Exception {
        for (String kind : List.of("Role", "ClusterRole")) {
            List<Rbac.Rule> rules = RbacObjects.rules(KubeFixtures.protobuf("rbac.authorization.k8s.io.v1." + kind));
            assertThat(rules).hasSize(1);
            Rbac.Rule rule = rules.get(0);
            assertThat(rule.verbs()).containsExactly("verbsValue");
            assertThat(rule.apiGroups()).containsExactly("apiGroupsValue");
            assertThat(rule.resources()).containsExactly("resourcesValue");
            assertThat(rule.resourceNames()).containsExactly("resourceNamesValue");
            assertThat(rule.nonResourceURLs()).containsExactly("nonResourceURLsValue");
        }
        Rbac.Binding binding =
                RbacObjects.binding(KubeFixtures.protobuf("rbac.authorization.k8s.io.v1.RoleBinding"), "ns", "b");
        assertThat(binding.roleKind()).isEqualTo("kindValue");
        assertThat(binding.roleName()).isEqualTo("nameValue");
        assertThat(binding.subjects()).containsExactly(new Rbac.Subject("kindValue", "nameValue", "namespaceValue"));
        assertThat(RbacObjects.binding(
                                KubeFixtures.protobuf("rbac.authorization.k8s.io.v1.ClusterRoleBinding"), "", "c")
                        .namespace())
                .isEmpty();
    }

    @Test
    void rolesAndBindingsStoredAsJson() throws Exception {
        for (String kind : List.of("Role", "ClusterRole")) {
            byte[] json = KubeFixtures.json("rbac.authorization.k8s.io.v1." + kind)
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThat(RbacObjects.rules(json))
                    .isEqualTo(RbacObjects.rules(KubeFixtures.protobuf("rbac.authorization.k8s.io.v1." + kind)));
        }
        for (String kind : List.of("RoleBinding", "ClusterRoleBinding")) {
            byte[] json = KubeFixtures.json("rbac.authorization.k8s.io.v1." + kind)
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThat(RbacObjects.binding(json, "ns", "b"))
                    .isEqualTo(RbacObjects.binding(
                            KubeFixtures.protobuf("rbac.authorization.k8s.io.v1." + kind), "ns", "b"));
        }
        // A binding as kubectl would write it, with a subject of no namespace.
        Rbac.Binding written = RbacObjects.binding(
                ("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
                                + "\"metadata\":{\"name\":\"v\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
                                + "\"kind\":\"ClusterRole\",\"name\":\"view\"},\"subjects\":[{\"kind\":\"Group\","
                                + "\"name\":\"viewers\"}]}")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                "",
                "v");
        assertThat(written.roleName()).isEqualTo("view");
        assertThat(written.subjects()).containsExactly(new Rbac.Subject("Group", "viewers", ""));
        assertThatThrownBy(() -> RbacObjects.rules(
                        "{\"kind\":\"Role\",\"rules\":{}}".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isInstanceOf(UndecodableObjectException.class)
                .hasMessageContaining("rules");
    }

    @Test
    void theUidServiceAccountTokensAreCheckedAgainstIsReadFromProtobufAndJson() throws Exception {
        assertThat(KubeObjects.uidOf(KubeFixtures.protobuf("core.v1.ServiceAccount")))
                .isEqualTo("uidValue");
        assertThat(KubeObjects.uidOf(KubeFixtures.protobuf("core.v1.Pod"))).isEqualTo("uidValue");
        assertThat(KubeObjects.uidOf("{\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\",\"uid\":\"u-1\"}}"
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isEqualTo("u-1");
        assertThatThrownBy(
                        () -> KubeObjects.uidOf("k8s:enc:kms:v2:x:y".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isInstanceOf(UndecodableObjectException.class);
    }

    @Test
    void theTokenOfALegacyServiceAccountSecretIsReadFromProtobufAndJson() throws Exception {
        assertThat(KubeObjects.dataEntry(KubeFixtures.protobuf("core.v1.Secret"), "dataKey"))
                .isEqualTo(KubeObjects.dataEntry(
                        KubeFixtures.json("core.v1.Secret").getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        "dataKey"));
        assertThat(KubeObjects.dataEntry(
                        "{\"kind\":\"Secret\",\"data\":{\"token\":\"YWJj\"}}"
                                .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        "token"))
                .isEqualTo("abc".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(KubeObjects.dataEntry(KubeFixtures.protobuf("core.v1.Secret"), "token"))
                .isNull();
    }

    @Test
    void anotherKindIsRefused() {
        assertThatThrownBy(() -> RbacObjects.rules(KubeFixtures.protobuf("core.v1.Pod")))
                .isInstanceOf(UndecodableObjectException.class)
                .hasMessageContaining("Pod");
    }
}
