package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The resource table against kube-apiserver's storage layout and the node's schema. */
class KubeResourcesTest {
    private final KubeResources resources = KubeResources.builtIn("/registry");

    @Test
    @RequiresKubeFixtures
    void everyFixtureKindIsServed() {
        for (String name : KubeFixtures.names()) {
            byte[] stored = KubeFixtures.protobuf(name);
            StoredObject object = StoredObject.of(stored, 0, stored.length);
            if (object.apiVersion().equals("events.k8s.io/v1")) {
                continue; // stored as core v1 Events: served in that form
            }
            assertThat(resources.all())
                    .as(name)
                    .anyMatch(r -> r.apiVersion().equals(object.apiVersion())
                            && r.kind().equals(object.kind()));
        }
    }

    @Test
    void everyServedKindHasASchema() {
        for (KubeResource r : resources.all()) {
            assertThat(KubeSchema.standard().type(r.apiVersion(), r.kind()))
                    .as(r.apiVersion() + " " + r.kind())
                    .isPresent();
            assertThat(KubeSchema.standard().type(r.apiVersion(), r.listKind()))
                    .as(r.apiVersion() + " " + r.listKind())
                    .isPresent();
        }
    }

    @Test
    void keysMapToTheirObjectsIncludingTheOddStoragePaths() {
        assertThat(parse("/registry/pods/default/web-0")).hasValueSatisfying(k -> {
            assertThat(k.resource().plural()).isEqualTo("pods");
            assertThat(k.namespace()).isEqualTo("default");
            assertThat(k.name()).isEqualTo("web-0");
        });
        assertThat(parse("/registry/minions/node-1").map(k -> k.resource().kind()))
                .hasValue("Node");
        assertThat(parse("/registry/services/specs/default/kubernetes")
                        .map(k -> k.resource().kind()))
                .hasValue("Service");
        assertThat(parse("/registry/services/endpoints/default/kubernetes")
                        .map(k -> k.resource().kind()))
                .hasValue("Endpoints");
        assertThat(parse("/registry/controllers/ns/rc").map(k -> k.resource().kind()))
                .hasValue("ReplicationController");
        assertThat(parse("/registry/ingress/ns/i").map(k -> k.resource().kind()))
                .hasValue("Ingress");
        assertThat(parse("/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com")
                        .map(k -> k.resource().kind()))
                .hasValue("CustomResourceDefinition");
        assertThat(parse("/registry/clusterroles/admin").map(KubeResources.ObjectKey::name))
                .hasValue("admin");
        // The GA resources of the newer groups, without their group in the key.
        assertThat(parse("/registry/resourceclaims/ns/gpu-claim")
                        .map(k -> k.resource().apiVersion()))
                .hasValue("resource.k8s.io/v1");
        assertThat(parse("/registry/flowschemas/exempt").map(k -> k.resource().kind()))
                .hasValue("FlowSchema");
        assertThat(parse("/registry/csistoragecapacities/kube-system/csisc-1")
                        .map(k -> k.resource().namespaced()))
                .hasValue(true);
        assertThat(parse("/registry/validatingadmissionpolicybindings/b")
                        .map(k -> k.resource().kind()))
                .hasValue("ValidatingAdmissionPolicyBinding");
    }

    @Test
    void keysOfNoResourceMapToNothing() {
        assertThat(parse("compact_rev_key")).isEmpty();
        assertThat(parse("/registry/masterleases/10.0.0.1")).isEmpty();
        assertThat(parse("/registry/ranges/serviceips")).isEmpty();
        assertThat(parse("/registry/pods/no-namespace")).isEmpty();
        assertThat(parse("/registry/minions/a/b")).isEmpty();
        assertThat(parse("/registry/pods/ns/")).isEmpty();
        assertThat(parse("/other/pods/ns/a")).isEmpty();
    }

    @Test
    void keyPrefixesFollowTheConfiguredEtcdPrefix() {
        KubeResources custom = KubeResources.builtIn("/kube");
        KubeResource pods = custom.byPlural("", "v1", "pods").orElseThrow();
        assertThat(custom.keyPrefix(pods)).isEqualTo("/kube/pods/");
        assertThat(custom.keyPrefix(pods, "default")).isEqualTo("/kube/pods/default/");
        assertThat(pods.selectsField("spec.nodeName")).isTrue();
        assertThat(pods.selectsField("spec.containers")).isFalse();
    }

    private Optional<KubeResources.ObjectKey> parse(String key) {
        return resources.parse(key.getBytes(StandardCharsets.UTF_8));
    }
}
