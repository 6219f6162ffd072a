package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import io.watchfanout.fanout.e2e.Stack;
import io.watchfanout.fanout.testing.NodeApps;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unchanged Kubernetes clients of other languages against a node's Kubernetes API, over real
 * etcd, Kafka, ingester and node processes: the npm {@code @kubernetes/client-node} (pinned in
 * {@code src/test/node/kube-client-node}) lists pods and its informer follows an add, an update,
 * an add and a delete; Debian's {@code python3-kubernetes} (with {@code /usr/bin/python3}) lists
 * pods and its {@code watch.Watch().stream} follows the same. Both deserialize into their typed
 * models, whose required fields ({@code imageID}, even when empty) the node's JSON must carry.
 */
class KubeScriptClientsTest extends KubeStackTest {
    private static final List<String> CHANGES = List.of("add", "update", "delete");
    private static final List<String> EVENT_TYPES = List.of("ADDED", "MODIFIED", "DELETED");

    @TempDir
    Path temp;

    KubeScriptClientsTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    static Path clientNode() throws Exception {
        return NodeApps.install(
                "kube-client-node",
                "@kubernetes/client-node",
                List.of("package.json", "package-lock.json", "kube.mjs"));
    }

    static List<String> python(String... args) {
        List<String> command = new java.util.ArrayList<>(List.of(
                "/usr/bin/python3",
                Path.of("src/test/python/kube_client.py").toAbsolutePath().toString()));
        command.addAll(List.of(args));
        return command;
    }

    @Test
    void theJavaScriptClientListsAndItsInformerFollowsEveryChange() throws Exception {
        Path app = clientNode();
        Stack.Node node = start("node-js");
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));

        try (ClientProcess list = ClientProcess.start(
                List.of("node", "kube.mjs", node.url(), "list", "a"), app, temp.resolve("list.err"))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> !list.lines().isEmpty() || !list.isAlive());
            assertThat(list.lines()).as(list.diagnostics()).hasSize(1);
            JsonObject pods = list.lines().get(0);
            assertThat(pods.get("kind").getAsString()).isEqualTo("PodList");
            assertThat(pods.getAsJsonArray("items")
                            .get(0)
                            .getAsJsonObject()
                            .get("name")
                            .getAsString())
                    .isEqualTo("web-0");
            assertThat(pods.getAsJsonArray("imageIDs").get(0).getAsString()).isEmpty();
        }

        try (ClientProcess informer = closer.keep(ClientProcess.start(
                List.of("node", "kube.mjs", node.url(), "informer"), app, temp.resolve("inf.err")))) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> informer.events("event", CHANGES).contains("add web-0 node-1"));
            put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-2", "Running", "web"));
            put("pods/b/db-0", StoredObjects.pod("b", "db-0", "node-1", "Pending", "db"));
            delete("pods/a/web-0");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> informer.events("event", CHANGES).size() >= 4);
            assertThat(informer.events("event", CHANGES))
                    .as(informer.diagnostics())
                    .containsExactly(
                            "add web-0 node-1", "update web-0 node-2", "add db-0 node-1", "delete web-0 node-2");
            assertThat(informer.events("event", List.of("error")))
                    .as(informer.diagnostics())
                    .isEmpty();
        }
    }

    @Test
    void thePythonClientListsAndItsWatchFollowsEveryChange() throws Exception {
        Stack.Node node = start("node-py");
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));

        String revision;
        try (ClientProcess list =
                ClientProcess.start(python(node.url(), "list", "a"), temp, temp.resolve("list.err"))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> !list.lines().isEmpty() || !list.isAlive());
            assertThat(list.lines()).as(list.diagnostics()).hasSize(1);
            JsonObject pods = list.lines().get(0);
            assertThat(pods.has("error")).as(list.diagnostics()).isFalse();
            assertThat(pods.get("kind").getAsString()).isEqualTo("PodList");
            assertThat(pods.getAsJsonArray("items")
                            .get(0)
                            .getAsJsonObject()
                            .get("name")
                            .getAsString())
                    .isEqualTo("web-0");
            assertThat(pods.getAsJsonArray("imageIDs").get(0).getAsString()).isEmpty();
            revision = pods.get("resourceVersion").getAsString();
        }

        // From the list's resourceVersion, as a client that lists and then watches.
        try (ClientProcess watch = closer.keep(
                ClientProcess.start(python(node.url(), "watch", "a", revision), temp, temp.resolve("watch.err")))) {
            put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-2", "Running", "web"));
            put("pods/a/db-0", StoredObjects.pod("a", "db-0", "node-1", "Pending", "db"));
            put("pods/b/other", StoredObjects.pod("b", "other", "node-1", "Pending", "db"));
            delete("pods/a/web-0");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> watch.events("type", EVENT_TYPES).size() >= 3 || !watch.isAlive());
            assertThat(watch.events("type", EVENT_TYPES))
                    .as(watch.diagnostics())
                    .containsExactly("MODIFIED web-0 node-2", "ADDED db-0 node-1", "DELETED web-0 node-2");
        }
    }
}
