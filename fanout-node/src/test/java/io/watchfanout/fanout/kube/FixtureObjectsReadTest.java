package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.fanout.kube.authz.NodeGraph;
import io.watchfanout.fanout.kube.authz.PodReferences;
import io.watchfanout.fanout.kube.authz.Rbac;
import io.watchfanout.fanout.kube.authz.RbacObjects;
import io.watchfanout.kube.codec.KubeFixtures;
import io.watchfanout.kube.codec.RequiresKubeFixtures;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the authorizers read from stored objects (pod references, RBAC rules and bindings, a
 * Secret's data, an object's uid), read from kube-apiserver's serializer fixtures: every field
 * filled, and the protobuf and the serializer's own JSON of one object read alike. The readers'
 * own tests ({@link NodeAuthorizationTest}, {@link RbacObjectsTest}) make their objects.
 */
@RequiresKubeFixtures
class FixtureObjectsReadTest {
    private static final String RBAC = "rbac.authorization.k8s.io.v1.";

    @Test
    void aFixturePodLinksEveryReferenceAndItsJsonTheSame() throws Exception {
        NodeGraph.PodLinks fromProtobuf = PodReferences.of(KubeFixtures.protobuf("core.v1.Pod"));
        assertThat(fromProtobuf.node()).isEqualTo("nodeNameValue");
        assertThat(fromProtobuf.secrets()).contains("secretNameValue", "nameValue");
        assertThat(fromProtobuf.configMaps()).contains("nameValue");
        assertThat(fromProtobuf.claims()).contains("claimNameValue");

        NodeGraph.PodLinks fromJson = PodReferences.of(json("core.v1.Pod"));
        assertThat(fromJson.node()).isEqualTo(fromProtobuf.node());
        assertThat(fromJson.secrets()).containsExactlyInAnyOrderElementsOf(fromProtobuf.secrets());
        assertThat(fromJson.configMaps()).containsExactlyInAnyOrderElementsOf(fromProtobuf.configMaps());
        assertThat(fromJson.claims()).containsExactlyInAnyOrderElementsOf(fromProtobuf.claims());
    }

    @Test
    void fixtureRolesAndBindingsReadAlikeFromProtobufAndJson() throws Exception {
        for (String kind : List.of("Role", "ClusterRole")) {
            List<Rbac.Rule> rules = RbacObjects.rules(KubeFixtures.protobuf(RBAC + kind));
            assertThat(rules).hasSize(1);
            Rbac.Rule rule = rules.get(0);
            assertThat(rule.verbs()).containsExactly("verbsValue");
            assertThat(rule.apiGroups()).containsExactly("apiGroupsValue");
            assertThat(rule.resources()).containsExactly("resourcesValue");
            assertThat(rule.resourceNames()).containsExactly("resourceNamesValue");
            assertThat(rule.nonResourceURLs()).containsExactly("nonResourceURLsValue");
            assertThat(RbacObjects.rules(json(RBAC + kind))).isEqualTo(rules);
        }
        Rbac.Binding binding = RbacObjects.binding(KubeFixtures.protobuf(RBAC + "RoleBinding"), "ns", "b");
        assertThat(binding.roleKind()).isEqualTo("kindValue");
        assertThat(binding.roleName()).isEqualTo("nameValue");
        assertThat(binding.subjects()).containsExactly(new Rbac.Subject("kindValue", "nameValue", "namespaceValue"));
        for (String kind : List.of("RoleBinding", "ClusterRoleBinding")) {
            assertThat(RbacObjects.binding(json(RBAC + kind), "ns", "b"))
                    .isEqualTo(RbacObjects.binding(KubeFixtures.protobuf(RBAC + kind), "ns", "b"));
        }
    }

    @Test
    void fixtureSecretDataAndUidsReadAlikeFromProtobufAndJson() throws Exception {
        assertThat(KubeObjects.dataEntry(KubeFixtures.protobuf("core.v1.Secret"), "dataKey"))
                .isNotNull()
                .isEqualTo(KubeObjects.dataEntry(json("core.v1.Secret"), "dataKey"));
        for (String name : List.of("core.v1.ServiceAccount", "core.v1.Pod")) {
            assertThat(KubeObjects.uidOf(KubeFixtures.protobuf(name))).isEqualTo("uidValue");
            assertThat(KubeObjects.uidOf(json(name))).isEqualTo("uidValue");
        }
    }

    private static byte[] json(String name) {
        return KubeFixtures.json(name).getBytes(StandardCharsets.UTF_8);
    }
}
