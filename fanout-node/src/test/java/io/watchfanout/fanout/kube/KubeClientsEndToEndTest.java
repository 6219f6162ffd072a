package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PartialObjectMetadata;
import io.fabric8.kubernetes.api.model.PartialObjectMetadataList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kubernetes.client.ProtoClient;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.util.CallGeneratorParams;
import io.watchfanout.fanout.e2e.Stack;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unchanged Kubernetes clients against a node's Kubernetes API: kubectl 1.32 ({@code /usr/bin/kubectl},
 * {@code --server} the node) and fabric8's kubernetes-client (metadata-only reads included), over real etcd, Kafka, ingester and
 * node processes; a CRD and its custom resources show up and go without a restart.
 */
class KubeClientsEndToEndTest extends KubeStackTest {

    @TempDir
    Path home;

    KubeClientsEndToEndTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    /** kubectl's output; the test fails with its stderr when it exits non-zero. */
    private String kubectl(Stack.Node node, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                "/usr/bin/kubectl",
                "--server",
                node.url(),
                "--cache-dir",
                home.resolve("cache").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("HOME", home.toString());
        pb.environment().put("KUBECONFIG", home.resolve("no-kubeconfig").toString());
        Path out = home.resolve("out.txt");
        Path err = home.resolve("err.txt");
        pb.redirectOutput(out.toFile());
        pb.redirectError(err.toFile());
        Process p = pb.start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS))
                .as("kubectl %s ended", command)
                .isTrue();
        String stdout = Files.readString(out);
        String stderr = Files.readString(err);
        assertThat(p.exitValue()).as("kubectl %s: %s%s", args, stdout, stderr).isZero();
        return stdout;
    }

    @Test
    void kubectlAndFabric8ListAndGetBuiltInAndCustomResources() throws Exception {
        Stack.Node node = start("node-a");
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));
        put("pods/a/web-1", StoredObjects.pod("a", "web-1", "node-2", "Running", "web"));
        put("pods/a/db-0", StoredObjects.pod("a", "db-0", "node-1", "Pending", "db"));
        put("pods/b/cache-0", StoredObjects.pod("b", "cache-0", "node-2", "Running", "cache"));
        put("apiextensions.k8s.io/customresourcedefinitions/widgets.example.com", StoredObjects.widgetDefinition());
        put("example.com/widgets/b/w1", StoredObjects.widget("b", "w1", 3));
        // Reads without resourceVersion are consistent: each sees every write above.

        // Discovery follows the cache (as kube-apiserver's follows its informer): the CRD shows up
        // once the node has applied it, not at once.
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(kubectl(node, "api-resources"))
                        .contains("pods", "deployments", "widgets", "customresourcedefinitions"));

        String all = kubectl(node, "get", "pods", "-A");
        assertThat(all).contains("NAMESPACE", "READY", "STATUS", "web-0", "web-1", "db-0", "cache-0", "Running");

        JsonObject inA = JsonParser.parseString(kubectl(node, "get", "pods", "-n", "a", "-o", "json"))
                .getAsJsonObject();
        assertThat(KubeApiEndToEndTest.names(inA)).containsExactly("db-0", "web-0", "web-1");

        assertThat(kubectl(node, "get", "pods", "-A", "-l", "app=web", "-o", "name"))
                .isEqualTo("pod/web-0\npod/web-1\n");
        // The "all" category of discovery, as kube-apiserver's.
        assertThat(kubectl(node, "get", "all", "-n", "a", "-o", "name")).contains("pod/db-0", "pod/web-0");
        assertThat(kubectl(node, "get", "pods", "-A", "--field-selector", "spec.nodeName=node-1", "-o", "name"))
                .isEqualTo("pod/db-0\npod/web-0\n");
        assertThat(kubectl(node, "get", "pod", "web-1", "-n", "a", "-o", "jsonpath={.spec.nodeName}"))
                .isEqualTo("node-2");

        assertThat(kubectl(node, "get", "crd")).contains("widgets.example.com");
        String widgets = kubectl(node, "get", "widgets", "-A");
        assertThat(widgets).contains("SIZE", "w1", "3");

        JsonObject raw = JsonParser.parseString(kubectl(node, "get", "--raw", "/api/v1/namespaces/a/pods"))
                .getAsJsonObject();
        assertThat(raw.get("kind").getAsString()).isEqualTo("PodList");
        assertThat(KubeApiEndToEndTest.names(raw)).containsExactly("db-0", "web-0", "web-1");

        Config config =
                new ConfigBuilder(Config.empty()).withMasterUrl(node.url()).build();
        try (KubernetesClient fabric8 =
                new KubernetesClientBuilder().withConfig(config).build()) {
            List<Pod> pods = fabric8.pods().inNamespace("a").list().getItems();
            assertThat(pods).extracting(p -> p.getMetadata().getName()).containsExactly("db-0", "web-0", "web-1");
            Pod web0 = fabric8.pods().inNamespace("a").withName("web-0").get();
            assertThat(web0.getSpec().getNodeName()).isEqualTo("node-1");
            assertThat(web0.getStatus().getPhase()).isEqualTo("Running");
            assertThat(web0.getMetadata().getResourceVersion()).isNotEmpty();
            assertThat(fabric8.pods()
                            .inAnyNamespace()
                            .withLabel("app", "web")
                            .list()
                            .getItems())
                    .hasSize(2);
            assertThat(fabric8.pods().inNamespace("a").withName("nope").get()).isNull();
            List<GenericKubernetesResource> w = fabric8.genericKubernetesResources("example.com/v1", "Widget")
                    .inNamespace("b")
                    .list()
                    .getItems();
            assertThat(w).extracting(r -> r.getMetadata().getName()).containsExactly("w1");

            // Metadata-only reads (as=PartialObjectMetadata), as the garbage collector makes them.
            PartialObjectMetadata web0Meta =
                    fabric8.pods().inNamespace("a").withName("web-0").getAsPartialObjectMetadata();
            assertThat(web0Meta.getKind()).isEqualTo("PartialObjectMetadata");
            assertThat(web0Meta.getApiVersion()).isEqualTo("meta.k8s.io/v1");
            assertThat(web0Meta.getMetadata().getUid()).isEqualTo("uid-web-0");
            assertThat(web0Meta.getMetadata().getLabels()).containsEntry("app", "web");
            assertThat(web0Meta.getMetadata().getResourceVersion())
                    .isEqualTo(web0.getMetadata().getResourceVersion());
            PartialObjectMetadataList inAMeta = fabric8.pods().inNamespace("a").listAsPartialObjectMetadata();
            assertThat(inAMeta.getKind()).isEqualTo("PartialObjectMetadataList");
            assertThat(inAMeta.getMetadata().getResourceVersion()).isNotEmpty();
            assertThat(inAMeta.getItems())
                    .extracting(m -> m.getMetadata().getName())
                    .containsExactly("db-0", "web-0", "web-1");
            assertThat(fabric8.genericKubernetesResources("example.com/v1", "Widget")
                            .inNamespace("b")
                            .listAsPartialObjectMetadata()
                            .getItems())
                    .extracting(m -> m.getMetadata().getName())
                    .containsExactly("w1");
        }

        // The CRD removed: its resources go from discovery and their paths, without a restart.
        delete("apiextensions.k8s.io/customresourcedefinitions/widgets.example.com");
        assertThat(kubectl(node, "get", "--raw", "/apis")).doesNotContain("example.com");
        ProcessBuilder gone = new ProcessBuilder(
                "/usr/bin/kubectl",
                "--server",
                node.url(),
                "--cache-dir",
                home.resolve("cache2").toString(),
                "get",
                "--raw",
                "/apis/example.com/v1/widgets");
        gone.environment().put("HOME", home.toString());
        gone.redirectErrorStream(true);
        Process p = gone.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isNotZero();
        assertThat(output).contains("NotFound");
    }

    @Test
    void aFabric8InformerAndKubectlWatchFollowEveryChange() throws Exception {
        Stack.Node node = start("node-w");
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));

        Path watchOut = home.resolve("watch.txt");
        ProcessBuilder pb = new ProcessBuilder(
                "/usr/bin/kubectl",
                "--server",
                node.url(),
                "--cache-dir",
                home.resolve("cache-w").toString(),
                "get",
                "pods",
                "-A",
                "-w",
                "-o",
                "name");
        pb.environment().put("HOME", home.toString());
        pb.environment().put("KUBECONFIG", home.resolve("no-kubeconfig").toString());
        pb.redirectOutput(watchOut.toFile());
        pb.redirectError(home.resolve("watch-err.txt").toFile());
        Process kubectlWatch = pb.start();
        closer.keep((AutoCloseable) kubectlWatch::destroyForcibly);

        List<String> seen = new CopyOnWriteArrayList<>();
        Config config =
                new ConfigBuilder(Config.empty()).withMasterUrl(node.url()).build();
        try (KubernetesClient fabric8 =
                new KubernetesClientBuilder().withConfig(config).build()) {
            // Default settings: fabric8's informer lists, then watches from the list's resourceVersion.
            SharedIndexInformer<Pod> informer = fabric8.pods().inAnyNamespace().inform(new ResourceEventHandler<>() {
                @Override
                public void onAdd(Pod pod) {
                    seen.add(followed(
                            "add", pod.getMetadata().getName(), pod.getSpec().getNodeName()));
                }

                @Override
                public void onUpdate(Pod before, Pod after) {
                    seen.add(followed(
                            "update",
                            after.getMetadata().getName(),
                            after.getSpec().getNodeName()));
                }

                @Override
                public void onDelete(Pod pod, boolean finalStateUnknown) {
                    seen.add(followed("delete", pod.getMetadata().getName(), null));
                }
            });
            movePodsAndAwait(seen);
            assertThat(informer.getStore().list())
                    .extracting(p -> p.getMetadata().getName())
                    .containsExactly("db-0");
            informer.stop();
        }
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Files.readString(watchOut).contains("pod/db-0"));
        assertThat(Files.readString(watchOut)).startsWith("pod/web-0\n");
    }

    @Test
    void theOfficialJavaClientsInformerAndProtoClientReadTheNode() throws Exception {
        Stack.Node node = start("node-j");
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));
        ApiClient api = io.kubernetes.client.util.Config.fromUrl(node.url(), false);
        // Watches are long reads: as the client's own examples do for informers.
        api.setHttpClient(api.getHttpClient()
                .newBuilder()
                .readTimeout(0, TimeUnit.SECONDS)
                .build());
        CoreV1Api coreV1 = new CoreV1Api(api);

        // ProtoClient: a protobuf list, the stored bytes with the resourceVersion set.
        ProtoClient.ObjectOrStatus<V1.PodList> protoList =
                new ProtoClient(api).list(V1.PodList.newBuilder(), "/api/v1/namespaces/a/pods");
        assertThat(protoList.status).isNull();
        assertThat(protoList.object.getItemsList())
                .extracting(p -> p.getMetadata().getName())
                .containsExactly("web-0");
        assertThat(protoList.object.getItems(0).getSpec().getNodeName()).isEqualTo("node-1");

        List<String> seen = new CopyOnWriteArrayList<>();
        SharedInformerFactory factory = new SharedInformerFactory(api);
        io.kubernetes.client.informer.SharedIndexInformer<V1Pod> informer = factory.sharedIndexInformerFor(
                (CallGeneratorParams params) -> coreV1.listPodForAllNamespaces()
                        .resourceVersion(params.resourceVersion)
                        .timeoutSeconds(params.timeoutSeconds)
                        .watch(params.watch)
                        .buildCall(null),
                V1Pod.class,
                V1PodList.class);
        informer.addEventHandler(new io.kubernetes.client.informer.ResourceEventHandler<>() {
            @Override
            public void onAdd(V1Pod pod) {
                seen.add(followed(
                        "add", pod.getMetadata().getName(), pod.getSpec().getNodeName()));
            }

            @Override
            public void onUpdate(V1Pod before, V1Pod after) {
                seen.add(followed(
                        "update", after.getMetadata().getName(), after.getSpec().getNodeName()));
            }

            @Override
            public void onDelete(V1Pod pod, boolean finalStateUnknown) {
                seen.add(followed("delete", pod.getMetadata().getName(), null));
            }
        });
        factory.startAllRegisteredInformers();
        try {
            movePodsAndAwait(seen);
            assertThat(informer.getIndexer().list())
                    .extracting(p -> p.getMetadata().getName())
                    .containsExactly("db-0");
        } finally {
            factory.stopAllRegisteredInformers();
        }
    }

    /** What an informer's handler saw: "add web-0 node-1", "delete web-0". */
    private static String followed(String what, String name, String nodeName) {
        return what + " " + name + (nodeName == null ? "" : " " + nodeName);
    }

    /**
     * Once an informer has web-0 on node-1: web-0 moves to node-2, db-0 arrives, web-0 goes; the
     * informer must see each pod's changes in that order. Across pods an informer promises no
     * order: client-go's and client-java's DeltaFIFO queue the changes per object, so web-0's
     * update and delete, both waiting, are handed out before db-0's add.
     */
    private void movePodsAndAwait(List<String> seen) throws Exception {
        await().atMost(Duration.ofSeconds(60)).until(() -> seen.contains("add web-0 node-1"));
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-2", "Running", "web"));
        put("pods/b/db-0", StoredObjects.pod("b", "db-0", "node-1", "Pending", "db"));
        delete("pods/a/web-0");
        await().atMost(Duration.ofSeconds(60)).until(() -> seen.size() == 4);
        assertThat(seen)
                .filteredOn(e -> e.contains("web-0"))
                .containsExactly("add web-0 node-1", "update web-0 node-2", "delete web-0");
        assertThat(seen).filteredOn(e -> e.contains("db-0")).containsExactly("add db-0 node-1");
    }
}
