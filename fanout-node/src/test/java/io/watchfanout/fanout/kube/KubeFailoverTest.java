package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.CallGeneratorParams;
import io.watchfanout.fanout.e2e.Stack;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unchanged clients that watch through a proxy (as through a Service) in front of fan-out nodes,
 * whose node is killed with SIGKILL mid-watch while the objects change: fabric8's informer
 * (default settings), the npm {@code @kubernetes/client-node} informer (restarted on error, as its
 * README does) and a loop around Debian's {@code python3-kubernetes} {@code Watch().stream}.
 * Another node with the history resumes them from their last resourceVersion: no relist, every
 * change once and in order. (client-java's informer, also there, lists again after any broken
 * watch stream by its own design; its cache ends equal to etcd's.) A node whose history no longer holds that resourceVersion answers
 * 410 Expired: each client lists again and goes on, its cache equal to etcd's.
 */
class KubeFailoverTest extends KubeStackTest {
    private static final List<String> CHANGES = List.of("add", "update", "delete");
    private static final List<String> EVENT_TYPES = List.of("ADDED", "MODIFIED", "DELETED");

    @TempDir
    Path temp;

    KubeFailoverTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    /** The three clients, each through its own proxy, watching the pods of namespace a. */
    private final class Clients {
        final SwitchingProxy fabric8Proxy;
        final SwitchingProxy jsProxy;
        final SwitchingProxy pythonProxy;
        final SwitchingProxy javaProxy;
        final io.kubernetes.client.informer.SharedIndexInformer<V1Pod> javaInformer;
        final List<String> fabric8Events = new CopyOnWriteArrayList<>();
        final SharedIndexInformer<Pod> fabric8Informer;
        final ClientProcess js;
        final ClientProcess python;

        Clients(Stack.Node node) throws Exception {
            fabric8Proxy = closer.keep(new SwitchingProxy(node.port()));
            jsProxy = closer.keep(new SwitchingProxy(node.port()));
            pythonProxy = closer.keep(new SwitchingProxy(node.port()));
            Config config = new ConfigBuilder(Config.empty())
                    .withMasterUrl(fabric8Proxy.url())
                    .build();
            KubernetesClient fabric8 =
                    closer.keep(new KubernetesClientBuilder().withConfig(config).build());
            fabric8Informer = fabric8.pods().inNamespace("a").inform(new ResourceEventHandler<>() {
                @Override
                public void onAdd(Pod pod) {
                    fabric8Events.add("add " + pod.getMetadata().getName() + " "
                            + pod.getSpec().getNodeName());
                }

                @Override
                public void onUpdate(Pod before, Pod after) {
                    if (!before.getMetadata()
                            .getResourceVersion()
                            .equals(after.getMetadata().getResourceVersion())) {
                        fabric8Events.add("update " + after.getMetadata().getName() + " "
                                + after.getSpec().getNodeName());
                    }
                }

                @Override
                public void onDelete(Pod pod, boolean finalStateUnknown) {
                    fabric8Events.add("delete " + pod.getMetadata().getName() + " "
                            + pod.getSpec().getNodeName());
                }
            });
            closer.keep((AutoCloseable) fabric8Informer::stop);
            js = closer.keep(ClientProcess.start(
                    List.of("node", "kube.mjs", jsProxy.url(), "informer"),
                    KubeScriptClientsTest.clientNode(),
                    temp.resolve("js.err")));
            python = closer.keep(ClientProcess.start(
                    KubeScriptClientsTest.python(pythonProxy.url(), "follow", "a"), temp, temp.resolve("py.err")));
            javaProxy = closer.keep(new SwitchingProxy(node.port()));
            ApiClient api = io.kubernetes.client.util.Config.fromUrl(javaProxy.url(), false);
            api.setHttpClient(api.getHttpClient()
                    .newBuilder()
                    .readTimeout(0, TimeUnit.SECONDS)
                    .build());
            CoreV1Api coreV1 = new CoreV1Api(api);
            SharedInformerFactory factory = new SharedInformerFactory(api);
            javaInformer = factory.sharedIndexInformerFor(
                    (CallGeneratorParams params) -> coreV1.listNamespacedPod("a")
                            .resourceVersion(params.resourceVersion)
                            .timeoutSeconds(params.timeoutSeconds)
                            .watch(params.watch)
                            .buildCall(null),
                    V1Pod.class,
                    V1PodList.class);
            factory.startAllRegisteredInformers();
            closer.keep((AutoCloseable) factory::stopAllRegisteredInformers);
        }

        /** The names in client-java's informer cache. */
        List<String> javaCache() {
            return javaInformer.getIndexer().list().stream()
                    .map(p -> p.getMetadata().getName())
                    .sorted()
                    .toList();
        }

        List<String> jsEvents() {
            return js.events("event", CHANGES);
        }

        List<String> pythonEvents() {
            return python.events("type", EVENT_TYPES);
        }

        List<JsonObject> pythonLists() {
            return python.lines().stream()
                    .filter(l -> l.get("type").getAsString().equals("LIST"))
                    .toList();
        }

        void switchTo(Stack.Node node) {
            fabric8Proxy.switchTo(node.port());
            javaProxy.switchTo(node.port());
            jsProxy.switchTo(node.port());
            pythonProxy.switchTo(node.port());
        }

        /** Waits up to 90 s for {@code condition}; fails with what every client saw. */
        void await(java.util.concurrent.Callable<Boolean> condition) {
            try {
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(90)).until(condition);
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                throw new AssertionError(e.getMessage() + "\n" + diagnostics(), e);
            }
        }

        String diagnostics() {
            return "fabric8 " + fabric8Events + " requests " + fabric8Proxy.targets() + "\njs " + js.diagnostics()
                    + "\njs requests " + jsProxy.targets() + "\npython " + python.diagnostics()
                    + "\npython requests " + pythonProxy.targets() + "\nclient-java " + javaCache() + " requests "
                    + javaProxy.targets();
        }
    }

    @Test
    void informersResumeOnAnotherNodeWithoutARelistAndMissNothing() throws Exception {
        Stack.Node a = start("node-a");
        Stack.Node b = node("node-b");
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));
        Clients clients = new Clients(a);
        clients.await(() -> clients.fabric8Events.contains("add web-0 node-1")
                && clients.jsEvents().contains("add web-0 node-1")
                && clients.pythonLists().size() == 1
                && clients.javaCache().equals(List.of("web-0")));

        // Node a dies mid-watch; the objects change while the clients have no node.
        a.process().kill();
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-2", "Running", "web"));
        put("pods/a/db-0", StoredObjects.pod("a", "db-0", "node-1", "Pending", "db"));
        long last = delete("pods/a/web-0");
        KubeApiEndToEndTest.awaitNode(b, last);
        clients.switchTo(b);

        List<String> expected = List.of("update web-0 node-2", "add db-0 node-1", "delete web-0 node-2");
        clients.await(() -> clients.fabric8Events.size() >= 4
                && clients.jsEvents().size() >= 4
                && clients.pythonEvents().size() >= 3);
        List<String> all = new ArrayList<>(List.of("add web-0 node-1"));
        all.addAll(expected);
        assertThat(clients.fabric8Events).as(clients.diagnostics()).containsExactlyElementsOf(all);
        assertThat(clients.jsEvents()).as(clients.diagnostics()).containsExactlyElementsOf(all);
        assertThat(clients.pythonEvents())
                .as(clients.diagnostics())
                .containsExactly("MODIFIED web-0 node-2", "ADDED db-0 node-1", "DELETED web-0 node-2");
        // One list each, before the kill: the watches resumed on node b from their resourceVersion.
        assertThat(clients.fabric8Proxy.lists()).as(clients.diagnostics()).hasSize(1);
        assertThat(clients.jsProxy.lists()).as(clients.diagnostics()).hasSize(1);
        assertThat(clients.pythonProxy.lists()).as(clients.diagnostics()).hasSize(1);
        assertThat(clients.fabric8Informer.getStore().list())
                .extracting(p -> p.getMetadata().getName())
                .containsExactly("db-0");
        // client-java's informer lists again after a broken watch stream (its ReflectorRunnable
        // returns on an IO error), and its cache ends equal to etcd's all the same.
        clients.await(() -> clients.javaCache().equals(List.of("db-0")));
        assertThat(clients.javaProxy.lists()).as(clients.diagnostics()).hasSizeGreaterThan(1);
    }

    @Test
    void aWatchThatGetsExpiredRelistsAndGoesOn() throws Exception {
        Stack.Node a = start("node-a");
        // Node c keeps 3 events and never reads older history from Kafka: an older resume is 410.
        Stack.Node c = node("node-c", "--history-max-events", "3", "--deep-read-max-readers", "0");
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));
        Clients clients = new Clients(a);
        clients.await(() -> clients.fabric8Events.contains("add web-0 node-1")
                && clients.jsEvents().contains("add web-0 node-1")
                && clients.pythonLists().size() == 1
                && clients.javaCache().equals(List.of("web-0")));

        a.process().kill();
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-2", "Running", "web"));
        put("pods/a/db-0", StoredObjects.pod("a", "db-0", "node-1", "Pending", "db"));
        long last = delete("pods/a/web-0");
        for (int i = 0; i < 6; i++) {
            last = put(
                    "configmaps/a/churn",
                    ("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"churn\","
                                    + "\"namespace\":\"a\"},\"data\":{\"i\":\"" + i + "\"}}")
                            .getBytes(StandardCharsets.UTF_8));
        }
        KubeApiEndToEndTest.awaitNode(c, last);
        clients.switchTo(c);

        // Each client lists again after the 410 and follows the next change. The proxies count a
        // list when it is asked; the informers' delete of web-0 shows that its answer was applied,
        // so the next change cannot land in that list instead of the watch that follows it.
        clients.await(() -> clients.fabric8Proxy.lists().size() == 2
                && clients.fabric8Events.contains("delete web-0 node-1")
                && clients.jsProxy.lists().size() == 2
                && clients.jsEvents().contains("delete web-0 node-1")
                && clients.pythonLists().size() == 2);
        put("pods/a/cache-0", StoredObjects.pod("a", "cache-0", "node-3", "Running", "cache"));
        clients.await(() -> clients.fabric8Events.contains("add cache-0 node-3")
                && clients.jsEvents().contains("add cache-0 node-3")
                && clients.pythonEvents().contains("ADDED cache-0 node-3"));

        assertThat(state(clients.fabric8Events)).as(clients.diagnostics()).containsExactly("db-0", "cache-0");
        assertThat(state(clients.jsEvents())).as(clients.diagnostics()).containsExactly("db-0", "cache-0");
        assertThat(clients.fabric8Informer.getStore().list())
                .extracting(p -> p.getMetadata().getName())
                .containsExactlyInAnyOrder("db-0", "cache-0");
        assertThat(clients.pythonLists().get(1).getAsJsonArray("names").toString())
                .isEqualTo("[\"db-0\"]");
        assertThat(clients.python.lines().stream()
                        .filter(l -> l.get("type").getAsString().equals("EXPIRED"))
                        .count())
                .as(clients.diagnostics())
                .isEqualTo(1);
        assertThat(clients.fabric8Proxy.lists()).hasSize(2);
        assertThat(clients.jsProxy.lists()).hasSize(2);
        clients.await(() -> clients.javaCache().equals(List.of("cache-0", "db-0")));
    }

    /** The names an informer's callbacks leave in its cache, in the order they came. */
    private static Set<String> state(List<String> events) {
        Set<String> names = new LinkedHashSet<>();
        for (String e : events) {
            String[] words = e.split(" ");
            if (words[0].equals("delete")) {
                names.remove(words[1]);
            } else {
                names.add(words[1]);
            }
        }
        return names;
    }
}
