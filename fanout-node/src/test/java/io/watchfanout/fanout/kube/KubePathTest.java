package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.kube.codec.CustomResources;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Kubernetes API paths as kube-apiserver resolves them. */
class KubePathTest {
    private final KubeResources resources = KubeResources.builtIn("/registry");

    @Test
    void discoveryPaths() {
        assertThat(target("/version")).hasValue(KubePath.Target.VERSION);
        assertThat(target("/api")).hasValue(KubePath.Target.CORE_GROUPS);
        assertThat(target("/apis/")).hasValue(KubePath.Target.GROUPS);
        assertThat(parse("/api/v1").map(KubePath::apiVersion)).hasValue("v1");
        assertThat(parse("/apis/apps/v1").map(KubePath::target)).hasValue(KubePath.Target.RESOURCES);
        assertThat(parse("/apis/apps")).isEmpty();
    }

    @Test
    void collectionsAndObjects() {
        KubePath all = parse("/api/v1/pods").orElseThrow();
        assertThat(all.target()).isEqualTo(KubePath.Target.COLLECTION);
        assertThat(all.namespace()).isEmpty();
        KubePath inNamespace = parse("/api/v1/namespaces/kube-system/pods").orElseThrow();
        assertThat(inNamespace.namespace()).isEqualTo("kube-system");
        KubePath pod = parse("/api/v1/namespaces/default/pods/web-0").orElseThrow();
        assertThat(pod.target()).isEqualTo(KubePath.Target.OBJECT);
        assertThat(pod.name()).isEqualTo("web-0");
        KubePath status = parse("/api/v1/namespaces/default/pods/web-0/status").orElseThrow();
        assertThat(status.subresource()).isEqualTo("status");
        KubePath namespace = parse("/api/v1/namespaces/default").orElseThrow();
        assertThat(namespace.resource().kind()).isEqualTo("Namespace");
        assertThat(namespace.name()).isEqualTo("default");
        assertThat(parse("/api/v1/nodes/node-1").map(p -> p.resource().kind())).hasValue("Node");
        assertThat(parse("/apis/apps/v1/namespaces/x/deployments/d")
                        .map(p -> p.resource().kind()))
                .hasValue("Deployment");
        KubePath watch = parse("/api/v1/watch/namespaces/default/pods").orElseThrow();
        assertThat(watch.legacyWatch()).isTrue();
        assertThat(watch.namespace()).isEqualTo("default");
    }

    @Test
    void pathsOfNothingServed() {
        assertThat(parse("/api/v1/widgets")).isEmpty();
        assertThat(parse("/api/v2/pods")).isEmpty();
        assertThat(parse("/api/v1/namespaces/default/nodes")).isEmpty();
        assertThat(parse("/api/v1/pods/web-0")).isEmpty();
        assertThat(parse("/api/v1/namespaces/default/pods/a/b/c")).isEmpty();
        assertThat(parse("/api/v1/namespaces//pods")).isEmpty();
        assertThat(parse("/healthz")).isEmpty();
        assertThat(parse("/")).isEmpty();
    }

    private Optional<KubePath> parse(String path) {
        return KubePath.parse(path, resources);
    }

    private Optional<KubePath.Target> target(String path) {
        return parse(path).map(KubePath::target);
    }

    @Test
    void aCustomResourceIsServedFromItsStoredDefinition() throws Exception {
        KubeResource widgets = CustomResources.fromStoredDefinition(("""
                        {"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
                         "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
                           "versions":[{"name":"v1","served":true,"storage":true}]},
                         "status":{"conditions":[{"type":"Established","status":"True"}]}}""").getBytes(StandardCharsets.UTF_8))
                .orElseThrow();
        KubeResources withWidgets = resources.with(List.of(widgets));
        assertThat(KubePath.parse("/apis/example.com/v1/namespaces/shop/widgets", withWidgets))
                .isPresent();
        assertThat(new String(new KubeDiscovery(withWidgets).resourceList("example.com/v1"), StandardCharsets.UTF_8))
                .contains("\"widgets\"");
    }
}
