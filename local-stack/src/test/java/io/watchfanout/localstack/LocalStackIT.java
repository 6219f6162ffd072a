package io.watchfanout.localstack;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.WatchClient;
import io.watchfanout.testkit.WatchClient.Encoding;
import io.watchfanout.testkit.WatchClient.Resume;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * End-to-end test of {@code bin/local-stack}, started exactly as a user starts it (the
 * script, from another working directory), on free ports: writes with {@code etcdctl},
 * watches over plain HTTP through both fan-out nodes, kills one node with SIGKILL and resumes
 * its watchers on the other, and checks that every watcher saw exactly the events of etcd's own
 * watch; then SIGTERM must leave no process and no listening port behind. A second test
 * restarts the stack on the same {@code --data-dir} and checks that the ingester resumed
 * without a gap or a duplicate.
 *
 * <p>Runs in Maven's integration-test phase (failsafe), after every module was packaged; the
 * script is told not to build ({@code LOCAL_STACK_SKIP_BUILD=1}), since this build has just
 * made the jars. Transcripts of the stack's terminal are kept under
 * {@code target/local-stack-it/}.
 */
class LocalStackIT {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(150);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(90);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final Path projectRoot = Path.of("").toAbsolutePath().getParent();
    private final Path script = projectRoot.resolve("bin/local-stack");
    private final Path itDir = Path.of("target", "local-stack-it").toAbsolutePath();
    private final List<StackProcess> stacks = new ArrayList<>();
    private final List<WatchClient> watches = new ArrayList<>();
    private int[] ports;

    @BeforeEach
    void pickPorts() throws IOException {
        assertThat(onPath("etcdctl"))
                .as("etcdctl on PATH (Debian package etcd-client): the test writes with it")
                .isTrue();
        Files.createDirectories(itDir);
        // etcd, etcd peer, Kafka, Kafka controller, ingester, two fan-out nodes, their etcd APIs,
        // the balancer's HTTP and etcd API ports, kube-topics
        ports = FreePorts.pick(12);
    }

    @AfterEach
    void cleanUp() {
        watches.forEach(WatchClient::close);
        stacks.forEach(StackProcess::close);
    }

    private List<String> portArgs() {
        return List.of(
                "--etcd-port",
                Integer.toString(ports[0]),
                "--etcd-peer-port",
                Integer.toString(ports[1]),
                "--kafka-port",
                Integer.toString(ports[2]),
                "--kafka-controller-port",
                Integer.toString(ports[3]),
                "--ingester-port",
                Integer.toString(ports[4]),
                "--fanout-ports",
                ports[5] + "," + ports[6],
                "--fanout-etcd-ports",
                ports[7] + "," + ports[8],
                "--balancer-port",
                Integer.toString(ports[9]),
                "--balancer-etcd-port",
                Integer.toString(ports[10]),
                "--kube-topics-port",
                Integer.toString(ports[11]));
    }

    private StackProcess startStack(String name, List<String> extraArgs) throws Exception {
        List<String> args = new ArrayList<>(portArgs());
        args.addAll(extraArgs);
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("HHmmss"));
        StackProcess stack = StackProcess.start(
                script,
                itDir,
                args,
                Map.of("LOCAL_STACK_SKIP_BUILD", "1", "WATCHFANOUT_BOOKMARK_INTERVAL", "1s"),
                itDir.resolve(name + "-" + stamp + ".txt"));
        stacks.add(stack);
        stack.awaitLine("Press Ctrl-C to stop everything.", READY_TIMEOUT);
        return stack;
    }

    @Test
    void watchersThroughBothNodesSeeExactlyEtcdsEventsAcrossANodeKillAndSigtermLeavesNothingBehind() throws Exception {
        StackProcess stack = startStack("main", List.of());
        Map<String, StackProcess.Part> parts = stack.parts();
        assertThat(parts)
                .containsKeys(
                        "etcd",
                        "kafka",
                        "ingester",
                        "kube-topics",
                        "fanout-node@" + ports[5],
                        "fanout-node@" + ports[6]);
        Path dataDir = stack.dataDir();
        assertThat(dataDir).isDirectory();
        // With haproxy installed the printed lines use the balancer, else the first node.
        boolean balanced = io.watchfanout.testkit.HaproxyServer.executable().isPresent();
        assertThat(stack.output())
                .contains("curl -N 'http://127.0.0.1:" + (balanced ? ports[9] : ports[5])
                        + "/v1/watch?key=/registry/&prefix=true&allowWatchBookmarks=true'")
                .contains("etcdctl --endpoints=http://127.0.0.1:" + ports[0] + " put /registry/demo hello")
                .contains("etcdctl --endpoints="
                        + (balanced ? "127.0.0.1:" + ports[10] : "127.0.0.1:" + ports[7] + ",127.0.0.1:" + ports[8])
                        + " watch --prefix /registry/");
        if (balanced) {
            assertThat(parts).containsKey("balancer");
        } else {
            assertThat(stack.output()).contains("haproxy is not installed (apt-get install haproxy)");
        }
        String etcdUrl = parts.get("etcd").address();
        String nodeA = parts.get("fanout-node@" + ports[5]).address();
        String nodeB = parts.get("fanout-node@" + ports[6]).address();
        Etcdctl etcdctl = new Etcdctl(etcdUrl);

        try (EtcdTruth etcd = new EtcdTruth(etcdUrl)) {
            long start = etcd.revision();
            WatchClient a1 =
                    watch("A1 all, JSON", "key=" + enc("/registry/") + "&prefix=true", true, Resume.LAST_BOOKMARK);
            WatchClient a2 = watch(
                    "A2 pods, JSON",
                    "key=" + enc("/registry/pods/") + "&prefix=true",
                    true,
                    Resume.LAST_COMPLETE_REVISION);
            WatchClient a3 =
                    watch("A3 all, protobuf", "key=" + enc("/registry/") + "&prefix=true", false, Resume.LAST_BOOKMARK);
            WatchClient b1 =
                    watch("B1 all, JSON", "key=" + enc("/registry/") + "&prefix=true", true, Resume.LAST_BOOKMARK);
            WatchClient b2 = watch(
                    "B2 one key", "key=" + enc("/registry/configmaps/default/settings"), true, Resume.LAST_BOOKMARK);
            WatchClient b3 = watch(
                    "B3 range [/registry/a, /registry/m)",
                    "key=" + enc("/registry/a") + "&rangeEnd=" + enc("/registry/m"),
                    true,
                    Resume.LAST_BOOKMARK);
            for (WatchClient w : List.of(a1, a2, a3)) {
                assertThat(w.connect(nodeA, start)).as(w.name()).isEqualTo(200);
            }
            for (WatchClient w : List.of(b1, b2, b3)) {
                assertThat(w.connect(nodeB, start)).as(w.name()).isEqualTo(200);
            }

            // Phase 1, both nodes up: creates, updates, a 3-key transaction, keys under an expiring
            // lease, a delete, and a write outside /registry/.
            etcdctl.put("/registry/pods/default/web-1", pod("web-1", "Pending"));
            etcdctl.put("/registry/pods/default/web-2", pod("web-2", "Pending"));
            etcdctl.put("/registry/configmaps/default/settings", "mode=a");
            etcdctl.put("/registry/pods/default/web-1", pod("web-1", "Running"));
            etcdctl.txn(
                    List.of(),
                    List.of(
                            "put /registry/pods/team-a/api-1 " + pod("api-1", "Pending"),
                            "put /registry/pods/team-a/api-2 " + pod("api-2", "Pending"),
                            "put /registry/events/team-a/api.1 Scheduled"),
                    List.of());
            etcdctl.put("/other/not-watched", "x");
            // A write through a fan-out node's etcd API, forwarded to etcd.
            new Etcdctl("127.0.0.1:" + ports[7]).put("/other/through-a-node", "x");
            long lease = etcdctl.grantLease(2);
            etcdctl.put("/registry/events/default/e1", "expires", lease);
            etcdctl.put("/registry/events/default/e2", "expires too", lease);
            etcdctl.delete("/registry/pods/default/web-2", false);
            long phase1 = etcdctl.put("/registry/configmaps/default/settings", "mode=b");
            for (WatchClient w : List.of(a1, a2, a3, b1, b2, b3)) {
                awaitBookmark(w, phase1);
            }

            // One more transaction, received on node A after its watchers' last bookmark, then node A
            // dies (SIGKILL) before the next bookmark, most likely: the frames after the bookmark are
            // dropped and received again from node B.
            long beforeKill = etcdctl.txn(
                    List.of(),
                    List.of(
                            "put /registry/pods/default/web-3 " + pod("web-3", "Pending"),
                            "put /registry/events/team-a/web-3.1 Scheduled"),
                    List.of());
            for (WatchClient w : List.of(a1, a2, a3)) {
                awaitTrue(
                        () -> w.lastResourceVersion() >= beforeKill,
                        Duration.ofSeconds(20),
                        w.name() + " gets " + beforeKill);
            }
            StackProcess.Part killed = parts.get("fanout-node@" + ports[5]);
            ProcessHandle.of(killed.pid()).orElseThrow().destroyForcibly();
            for (WatchClient w : List.of(a1, a2, a3)) {
                awaitTrue(w::ended, Duration.ofSeconds(20), w.name() + " ends when node A dies");
            }
            stack.awaitLine("! fanout-node " + nodeA, Duration.ofSeconds(10));

            // Phase 2, node A down: a conditional transaction mixing a PUT and a DELETE, a
            // two-key delete by prefix.
            etcdctl.txn(
                    List.of("mod(\"/registry/pods/default/web-1\") > \"0\""),
                    List.of(
                            "put /registry/pods/default/web-1 " + pod("web-1", "Succeeded"),
                            "del /registry/pods/team-a/api-2"),
                    List.of("put /registry/never x"));
            etcdctl.put("/registry/pods/team-b/w-1", pod("w-1", "Pending"));
            etcdctl.put("/registry/pods/team-b/w-2", pod("w-2", "Pending"));
            etcdctl.delete("/registry/pods/team-b/", true);

            // A's watchers resume on node B from their resume points.
            for (WatchClient w : List.of(a1, a2, a3)) {
                long from = w.trimToResumePoint(start);
                assertThat(w.connect(nodeB, from))
                        .as(w.name() + " resumes on node B from " + from)
                        .isEqualTo(200);
            }

            // Phase 3: more writes; the lease expires (etcd deletes both keys in one revision).
            etcdctl.put("/registry/configmaps/default/settings", "mode=c");
            etcdctl.put("/registry/deployments/default/web", "{\"kind\":\"Deployment\",\"spec\":{\"replicas\":2}}");
            awaitTrue(
                    () -> etcd.count("/registry/events/default/") == 0,
                    Duration.ofSeconds(20),
                    "the lease's keys expire");
            long last = etcdctl.put("/registry/zz-last", "end");

            List<EtcdTruth.Event> truth = etcd.events("/registry/", start, last);
            assertThat(truth.stream()
                            .filter(e -> e.line().startsWith("DELETED"))
                            .count())
                    .isGreaterThanOrEqualTo(5);
            for (WatchClient w : List.of(a1, a2, a3, b1, b2, b3)) {
                awaitTrue(
                        () -> w.lastResourceVersion() >= last || w.failure() != null,
                        Duration.ofSeconds(30),
                        w.name() + " reaches revision " + last);
                assertThat(w.failure()).as(w.name() + " decoding").isNull();
            }
            assertSameEvents(a1, truth, k -> k.startsWith("/registry/"));
            assertSameEvents(a2, truth, k -> k.startsWith("/registry/pods/"));
            assertSameEvents(a3, truth, k -> k.startsWith("/registry/"));
            assertSameEvents(b1, truth, k -> k.startsWith("/registry/"));
            assertSameEvents(b2, truth, k -> k.equals("/registry/configmaps/default/settings"));
            assertSameEvents(b3, truth, k -> k.compareTo("/registry/a") >= 0 && k.compareTo("/registry/m") < 0);
            for (WatchClient w : List.of(a1, a3, b1)) {
                assertNoBookmarkInsideARevision(w);
            }

            // A paged list from the surviving node equals etcd's state at the list's revision.
            List<String> listed = new ArrayList<>();
            long listRevision = listAll(nodeB, "/registry/", 2, listed);
            assertThat(listRevision).isGreaterThanOrEqualTo(last);
            assertThat(listed).containsExactlyElementsOf(etcd.state("/registry/", listRevision));

            // Both the node and the ingester export their metrics.
            assertThat(get(nodeB + "/metrics").body()).contains("watchfanout_");
            assertThat(get(parts.get("ingester").address() + "/metrics").body())
                    .contains("watchfanout_ingester_last_published_revision");
        }

        // SIGTERM: every process of the stack ends, nothing listens, the temporary directory goes.
        List<Long> pids = new ArrayList<>(stack.descendantPids());
        parts.values().forEach(p -> pids.add(p.pid()));
        pids.add(stack.pid());
        watches.forEach(WatchClient::close);
        Optional<Integer> exit = stack.terminate(STOP_TIMEOUT);
        assertThat(exit)
                .as("bin/local-stack exits after SIGTERM; output:\n" + stack.output())
                .isPresent();
        assertThat(exit.get()).isEqualTo(143);
        assertThat(stack.output()).contains("stopping the local stack").contains("stopped in");
        for (long pid : pids) {
            // Exited: gone, or a zombie that whoever adopted it (init) has yet to reap.
            assertThat(ProcessHandle.of(pid).map(io.watchfanout.testkit.ChildProcesses::isRunning))
                    .as("pid " + pid + " left running")
                    .isNotEqualTo(Optional.of(true));
        }
        for (int port : ports) {
            assertThat(listening(port))
                    .as("something still listens on port " + port)
                    .isFalse();
        }
        assertThat(dataDir).doesNotExist();
    }

    /**
     * {@code --secure}: the lines the stack prints work as printed (a token's watch of config maps
     * sees a write made with etcdctl as etcd's root; lists through a node's etcd API by client
     * certificate and as an etcd user), and the one it prints as refused is a 403. Then the
     * launcher is killed with SIGKILL: nothing of the (secured) stack may stay behind.
     */
    @Test
    void aSecuredStackServesThePrintedLinesAndASigkilledLauncherLeavesNoPartRunningOrListening() throws Exception {
        StackProcess stack = startStack("sigkill-secure", List.of("--secure"));
        List<String> commands = stack.output()
                .lines()
                .map(String::strip)
                .filter(l -> l.startsWith("curl ") || l.startsWith("etcdctl "))
                .toList();
        assertThat(commands).as("the printed command lines").hasSize(5);
        assertThat(commands.get(0)).contains("/v1/watch").contains("Authorization: Bearer");
        // --max-time ends a watch that never gets its event: the test fails instead of hanging.
        String watchCommand = commands.get(0).replace("curl -N", "curl -sN --max-time 120");
        Process watch = new ProcessBuilder("bash", "-c", watchCommand)
                .redirectErrorStream(true)
                .start();
        try {
            // The watch starts at the node's revision when it arrives: the put must come after
            // that, or the watch begins after it. Its first bookmark (every second here) shows it runs.
            assertThat(readUntil(watch, "\"BOOKMARK\""))
                    .as("the watch of " + commands.get(0))
                    .contains("BOOKMARK");
            assertThat(shell(commands.get(1))).as(commands.get(1)).contains("OK");
            String seen = readUntil(watch, "L3JlZ2lzdHJ5L2NvbmZpZ21hcHMvZGVtbw"); // /registry/configmaps/demo
            assertThat(seen).as("the watch of " + commands.get(0)).contains("\"type\":\"ADDED\"");
        } finally {
            watch.destroyForcibly();
        }
        assertThat(shell(commands.get(2))).as(commands.get(2)).contains("/registry/configmaps/demo");
        assertThat(shell(commands.get(3))).as(commands.get(3)).contains("/registry/configmaps/demo");
        assertThat(shell(commands.get(4).replace("curl ", "curl -s -w ' %{http_code}' ")))
                .as(commands.get(4))
                .contains("\"reason\":\"Forbidden\"")
                .endsWith(" 403");
        assertSigkillLeavesNothing(stack);
    }

    /**
     * {@code --demo}: right after the stack is ready, kubectl through a fan-out node's Kubernetes
     * API (the command line the stack prints) lists the demo's pods, nodes and namespaces
     * (protobuf envelopes in etcd, as kube-apiserver stores them) and its custom resources (JSON,
     * with the CRD's printer columns), and {@code get pods -A -w} prints the changes the load
     * makes; SIGTERM then stops the load with the stack.
     */
    @Test
    void kubectlThroughAFanoutNodeListsAndWatchesTheDemoLoad() throws Exception {
        StackProcess stack = startStack("demo", List.of("--demo"));
        String node = stack.parts()
                .getOrDefault("balancer", stack.parts().get("fanout-node@" + ports[5]))
                .address();
        stack.awaitLine("kubectl --server " + node + " get pods -A -w", Duration.ofSeconds(30));
        Path home = Files.createDirectories(itDir.resolve("kubectl-" + System.nanoTime()));

        Awaitility.await("kubectl get pods -A lists the demo's pods")
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> assertThat(kubectl(home, node, "get", "pods", "-A", "-o", "name")
                                .lines()
                                .filter(l -> l.startsWith("pod/"))
                                .count())
                        .isGreaterThanOrEqualTo(5));
        assertThat(kubectl(home, node, "get", "pods", "-A")).contains("NAMESPACE", "READY", "STATUS", "team-a");
        assertThat(kubectl(home, node, "get", "deployment", "web", "-n", "team-a", "-o", "jsonpath={.spec.replicas}"))
                .isEqualTo("4");
        assertThat(kubectl(home, node, "get", "nodes")).contains("node-1", "node-5", "Ready", "v1.32.0");
        assertThat(kubectl(home, node, "get", "namespaces")).contains("kube-system", "team-b", "Active");
        assertThat(kubectl(home, node, "get", "crd")).contains("backups.demo.example.com");
        // Stored as v1beta1 (as kube-apiserver stores CRDs), listed as v1, which kubectl's printer needs.
        assertThat(kubectl(
                        home,
                        node,
                        "get",
                        "crd",
                        "-o",
                        "jsonpath={.items[0].apiVersion} {.items[0].spec.versions[0].name}"))
                .isEqualTo("apiextensions.k8s.io/v1 v1");
        assertThat(kubectl(home, node, "get", "crd", "-o", "yaml")).contains("kind: CustomResourceDefinition");
        assertThat(kubectl(home, node, "get", "backups", "-A"))
                .contains("DATABASE", "SCHEDULE", "PHASE", "LAST SUCCESS")
                .contains("orders-db", "postgres://orders", "queue-db");

        // The README's watch: the initial list names each pod once; a pod in a second row is a change.
        Path watchOut = home.resolve("watch.txt");
        Process watch = kubectlProcess(home, node, "get", "pods", "-A", "-w")
                .redirectOutput(watchOut.toFile())
                .redirectError(home.resolve("watch-err.txt").toFile())
                .start();
        try {
            Awaitility.await("kubectl get pods -A -w prints a change of a listed pod")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> {
                        List<String> rows = Files.readAllLines(watchOut).stream()
                                .skip(1) // the header
                                .map(l -> l.split("\\s+"))
                                .filter(f -> f.length >= 2)
                                .map(f -> f[0] + "/" + f[1])
                                .toList();
                        return rows.stream().distinct().count() < rows.size();
                    });
            assertThat(watch.isAlive()).as("the watch keeps running").isTrue();
        } finally {
            watch.destroyForcibly();
        }

        assertKubeTopicsCarryTheDemo(stack);
        assertThat(stack.terminate(STOP_TIMEOUT)).hasValue(143);
    }

    /**
     * The Kubernetes topics application of a {@code --demo} stack: the printed kcat line reads
     * the demo's pods from {@code watch.k8s.pods} as watch events keyed {@code namespace/name},
     * and the printed {@code /readyz} and {@code /metrics} answer.
     */
    private void assertKubeTopicsCarryTheDemo(StackProcess stack) throws Exception {
        String ops = stack.parts().get("kube-topics").address();
        assertThat(ops).isEqualTo("http://127.0.0.1:" + ports[11]);
        assertThat(stack.output()).contains("kube-topics: " + ops + "/readyz, " + ops + "/metrics");
        String kcat = stack.output()
                .lines()
                .map(String::trim)
                .filter(l -> l.startsWith("kcat -C "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no kcat line printed:\n" + stack.output()));
        assertThat(kcat).contains("-b 127.0.0.1:" + ports[2], "-t watch.k8s.pods");
        Awaitility.await("the printed kcat line reads the demo's pods as watch events")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> assertThat(shell(kcat)
                                .lines()
                                .filter(l -> l.startsWith("team-a/")
                                        && l.contains("\"type\":\"ADDED\"")
                                        && l.contains("\"kind\":\"Pod\""))
                                .count())
                        .isGreaterThanOrEqualTo(1));
        HttpResponse<String> ready = HTTP.send(
                HttpRequest.newBuilder(URI.create(ops + "/readyz")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(ready.statusCode()).isEqualTo(200);
        HttpResponse<String> metrics = HTTP.send(
                HttpRequest.newBuilder(URI.create(ops + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("watchfanout_kube_events_total");
    }

    /**
     * {@code --demo} behind the balancer: an unchanged informer (fabric8's, default settings) and
     * {@code kubectl get pods -A -w} watch through the one printed address; the node holding the
     * informer's watch is killed with SIGKILL. The informer carries on with the demo's writes
     * through the other node, resumed from its resourceVersion without a second list. kubectl
     * does not: a {@code get -w} whose stream was on the killed node exits 0 without a message
     * (kubectl ends a watch when its connection breaks; README says so), while one whose stream
     * was on the other node runs on.
     */
    @Test
    void anInformerThroughTheBalancerOutlivesANodeKillAndKubectlWatchEndsWithItsStream() throws Exception {
        assertThat(io.watchfanout.testkit.HaproxyServer.executable())
                .as("haproxy on PATH (Debian package haproxy): the stack's load balancer")
                .isPresent();
        StackProcess stack = startStack("balanced", List.of("--demo", "--demo-rate", "50"));
        Map<String, StackProcess.Part> parts = stack.parts();
        String balancer = parts.get("balancer").address();
        assertThat(balancer).isEqualTo("http://127.0.0.1:" + ports[9]);
        stack.awaitLine("kubectl --server " + balancer + " get pods -A -w", Duration.ofSeconds(30));
        List<StackProcess.Part> nodes =
                List.of(parts.get("fanout-node@" + ports[5]), parts.get("fanout-node@" + ports[6]));
        Path home = Files.createDirectories(itDir.resolve("balanced-" + System.nanoTime()));

        // The informer first; which node holds its watch shows in the nodes' watcher gauges.
        List<Long> informed = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.fabric8.kubernetes.client.KubernetesClient client =
                new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                        .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(
                                        io.fabric8.kubernetes.client.Config.empty())
                                .withMasterUrl(balancer)
                                .build())
                        .build();
        io.fabric8.kubernetes.client.informers.SharedIndexInformer<io.fabric8.kubernetes.api.model.Pod> informer =
                client.pods().inAnyNamespace().inform(new PodVersions(informed));
        List<Process> kubectls = new ArrayList<>();
        try {
            awaitTrue(informer::hasSynced, Duration.ofSeconds(60), "the informer has listed");
            awaitTrue(
                    () -> watchers(nodes.get(0)) + watchers(nodes.get(1)) == 1,
                    Duration.ofSeconds(60),
                    "the informer's watch is on a node");
            StackProcess.Part informerNode = watchers(nodes.get(0)) == 1 ? nodes.get(0) : nodes.get(1);
            StackProcess.Part otherNode = informerNode == nodes.get(0) ? nodes.get(1) : nodes.get(0);

            // kubectl watches, one at a time, until one streams from each node.
            Map<Process, StackProcess.Part> kubectlNode = new java.util.HashMap<>();
            while (!kubectlNode.containsValue(informerNode) || !kubectlNode.containsValue(otherNode)) {
                assertThat(kubectls)
                        .as("kubectl watches placed by the balancer: " + kubectlNode)
                        .hasSizeLessThan(6);
                int before = watchers(informerNode);
                int expected = kubectls.size() + 2;
                int n = kubectls.size();
                Process p = kubectlProcess(home, balancer, "get", "pods", "-A", "-w")
                        .redirectOutput(home.resolve("watch-" + n + ".txt").toFile())
                        .redirectError(home.resolve("watch-" + n + "-err.txt").toFile())
                        .start();
                kubectls.add(p);
                awaitTrue(
                        () -> watchers(nodes.get(0)) + watchers(nodes.get(1)) == expected,
                        Duration.ofSeconds(60),
                        "kubectl's watch " + n + " is on a node");
                kubectlNode.put(p, watchers(informerNode) > before ? informerNode : otherNode);
            }

            long listsBefore = podLists(stack.dataDir());
            ProcessHandle.of(informerNode.pid()).orElseThrow().destroyForcibly();
            long afterKill;
            try (EtcdTruth etcd = new EtcdTruth(parts.get("etcd").address())) {
                afterKill = etcd.revision();
            }

            // The informer receives the demo's writes made after the kill, through the other node.
            awaitTrue(
                    () -> informed.stream().anyMatch(rv -> rv > afterKill),
                    Duration.ofSeconds(120),
                    "the informer receives writes after the kill");
            assertThat(informer.isWatching()).isTrue();
            assertThat(podLists(stack.dataDir()))
                    .as("pod lists through the balancer (the informer resumed its watch, no relist)")
                    .isEqualTo(listsBefore);
            for (Map.Entry<Process, StackProcess.Part> k : kubectlNode.entrySet()) {
                if (k.getValue() == informerNode) {
                    assertThat(k.getKey().waitFor(60, java.util.concurrent.TimeUnit.SECONDS))
                            .as("kubectl get -w on the killed node ends")
                            .isTrue();
                    assertThat(k.getKey().exitValue())
                            .as("kubectl get -w's exit status")
                            .isZero();
                } else {
                    assertThat(k.getKey().isAlive())
                            .as("kubectl get -w on the other node runs on")
                            .isTrue();
                }
            }
        } finally {
            kubectls.forEach(Process::destroyForcibly);
            informer.stop();
            client.close();
        }
        assertThat(stack.terminate(STOP_TIMEOUT)).hasValue(143);
    }

    /** The resourceVersion of every pod event an informer hands its handler. */
    private record PodVersions(List<Long> versions)
            implements io.fabric8.kubernetes.client.informers.ResourceEventHandler<
                    io.fabric8.kubernetes.api.model.Pod> {
        @Override
        public void onAdd(io.fabric8.kubernetes.api.model.Pod pod) {
            versions.add(Long.parseLong(pod.getMetadata().getResourceVersion()));
        }

        @Override
        public void onUpdate(io.fabric8.kubernetes.api.model.Pod before, io.fabric8.kubernetes.api.model.Pod after) {
            versions.add(Long.parseLong(after.getMetadata().getResourceVersion()));
        }

        @Override
        public void onDelete(io.fabric8.kubernetes.api.model.Pod pod, boolean finalStateUnknown) {
            versions.add(Long.parseLong(pod.getMetadata().getResourceVersion()));
        }
    }

    /** The watch streams a node serves now (its {@code watchfanout_watchers} gauges summed). */
    private static int watchers(StackProcess.Part node) throws IOException, InterruptedException {
        return (int) get(node.address() + "/metrics")
                .body()
                .lines()
                .filter(l -> l.startsWith("watchfanout_watchers{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    /** Pod lists (not watches) HAProxy has logged: {@code GET /api/v1/pods?...} without {@code watch=}. */
    private static long podLists(Path dataDir) throws IOException {
        return Files.readAllLines(dataDir.resolve("haproxy/haproxy.log")).stream()
                .filter(l -> l.contains("\"GET /api/v1/pods") && !l.contains("watch="))
                .count();
    }

    /** kubectl with {@code --server node}, no kubeconfig, its cache under {@code home}. */
    private static ProcessBuilder kubectlProcess(Path home, String node, String... args) {
        List<String> command = new ArrayList<>(List.of(
                "/usr/bin/kubectl",
                "--server",
                node,
                "--cache-dir",
                home.resolve("cache").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("HOME", home.toString());
        pb.environment().put("KUBECONFIG", home.resolve("no-kubeconfig").toString());
        return pb;
    }

    /** kubectl's output (a request may take up to 60 s); fails with its errors when it exits non-zero. */
    private static String kubectl(Path home, String node, String... args) throws Exception {
        Path err = home.resolve("err.txt");
        List<String> withTimeout = new ArrayList<>(List.of(args));
        withTimeout.add("--request-timeout=60s");
        Process p = kubectlProcess(home, node, withTimeout.toArray(String[]::new))
                .redirectError(err.toFile())
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor())
                .as("kubectl " + String.join(" ", args) + ": " + out + Files.readString(err))
                .isZero();
        return out;
    }

    /** Runs a printed command line in bash; its output and errors. */
    private static String shell(String command) throws Exception {
        Process p = new ProcessBuilder("bash", "-c", command)
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(command + " exit status; output: " + out).isZero();
        return out;
    }

    /** What {@code p} prints up to and including {@code text} (or its end). */
    private static String readUntil(Process p, String text) throws IOException {
        StringBuilder seen = new StringBuilder();
        java.io.InputStream in = p.getInputStream();
        int c;
        while (seen.indexOf(text) < 0 && (c = in.read()) >= 0) {
            seen.append((char) c);
        }
        return seen.toString();
    }

    private void assertSigkillLeavesNothing(StackProcess stack) throws Exception {
        List<ProcessHandle> below = stack.descendants();
        assertThat(below.stream().map(ProcessHandle::pid).toList())
                .as("every part of the status table")
                .containsAll(stack.parts().values().stream()
                        .map(StackProcess.Part::pid)
                        .toList());

        // No shutdown hook runs: only the parts' watchdogs can stop them.
        ProcessHandle.of(stack.pid()).orElseThrow().destroyForcibly();

        Awaitility.await("every process of the stack exits, nothing listens")
                .atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    assertThat(below)
                            .allSatisfy(p -> assertThat(p.isAlive())
                                    .as("pid " + p.pid() + " "
                                            + p.info().commandLine().orElse("") + " still running")
                                    .isFalse());
                    for (int port : ports) {
                        assertThat(listening(port))
                                .as("something still listens on port " + port)
                                .isFalse();
                    }
                });
        io.watchfanout.testkit.WorkDirs.deleteRecursively(stack.dataDir()); // kept: nobody removed it
    }

    @Test
    void aRestartOnTheSameDataDirResumesWithoutGapOrDuplicate() throws Exception {
        Path dataDir = itDir.resolve("restart-data-" + System.nanoTime());
        List<String> keep = List.of("--data-dir", dataDir.toString(), "--topic-prefix", "it");
        long before;
        StackProcess first = startStack("restart-1", keep);
        String etcdUrl = first.parts().get("etcd").address();
        String node = first.parts().get("fanout-node@" + ports[5]).address();
        Etcdctl etcdctl = new Etcdctl(etcdUrl);
        etcdctl.put("/registry/a", "1");
        etcdctl.txn(List.of(), List.of("put /registry/b 1", "put /registry/c 1"), List.of());
        before = etcdctl.delete("/registry/a", false);
        awaitTrue(
                () -> listAll(node, "/registry/", 0, new ArrayList<>()) >= before,
                Duration.ofSeconds(20),
                "the node reaches revision " + before);
        assertThat(first.terminate(STOP_TIMEOUT)).hasValue(143);
        assertThat(first.output()).contains("data and logs kept in " + dataDir);
        assertThat(dataDir.resolve("etcd/data")).isDirectory();
        assertThat(dataDir.resolve("kafka/data/meta.properties")).isRegularFile();

        StackProcess second = startStack("restart-2", keep);
        String node2 = second.parts().get("fanout-node@" + ports[6]).address();
        WatchClient w = watch("after restart", "key=" + enc("/registry/") + "&prefix=true", true, Resume.LAST_BOOKMARK);
        assertThat(w.connect(node2, before)).isEqualTo(200);
        etcdctl.put("/registry/b", "2");
        long last = etcdctl.txn(List.of(), List.of("put /registry/d 1", "del /registry/c"), List.of());
        try (EtcdTruth etcd = new EtcdTruth(etcdUrl)) {
            awaitTrue(() -> w.lastResourceVersion() >= last, Duration.ofSeconds(30), "the watch reaches " + last);
            assertSameEvents(w, etcd.events("/registry/", before, last), k -> k.startsWith("/registry/"));
            List<String> listed = new ArrayList<>();
            long rev = listAll(node2, "/registry/", 0, listed);
            assertThat(listed).containsExactlyElementsOf(etcd.state("/registry/", rev));

            // The events topic holds every etcd event exactly once, across the restart.
            List<String> published = publishedEvents(second.parts().get("kafka").address(), "it.events", last);
            assertThat(published).containsExactlyElementsOf(EtcdTruth.lines(etcd.events("/", 1, last), k -> true));
        }
        w.close();
        assertThat(second.terminate(STOP_TIMEOUT)).hasValue(143);
        io.watchfanout.testkit.WorkDirs.deleteRecursively(dataDir);
    }

    // ---- helpers ---------------------------------------------------------------------------

    private WatchClient watch(String name, String query, boolean json, Resume resume) {
        WatchClient w = new WatchClient(name, query, json ? Encoding.JSON : Encoding.PROTOBUF, resume);
        watches.add(w);
        return w;
    }

    private static boolean onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String pod(String name, String phase) {
        return "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" + name
                + "\"},\"status\":{\"phase\":\"" + phase + "\"}}";
    }

    /** Every event frame of {@code w} (bookmarks left out) equals etcd's event of its range. */
    private static void assertSameEvents(WatchClient w, List<EtcdTruth.Event> truth, Predicate<String> inRange) {
        List<String> seen = new ArrayList<>();
        for (WatchEvent f : w.frames()) {
            assertThat(f.getType()).as(w.name() + ": no ERROR frame: " + f).isNotEqualTo(WatchEvent.Type.ERROR);
            if (f.getType() != WatchEvent.Type.BOOKMARK) {
                seen.add(EtcdTruth.frameLine(f));
            }
        }
        assertThat(seen)
                .as(w + ", connections " + w.connections())
                .containsExactlyElementsOf(EtcdTruth.lines(truth, inRange));
        System.out.printf(
                "%s: %d events equal to etcd's own watch, %d bookmarks; connections %s%n",
                w, seen.size(), w.frames().size() - seen.size(), w.connections());
        long previous = 0;
        for (WatchEvent f : w.frames()) {
            assertThat(f.getResourceVersion())
                    .as(w.name() + ": resourceVersions never go back")
                    .isGreaterThanOrEqualTo(previous);
            previous = f.getResourceVersion();
        }
    }

    /** For a watcher that gets whole revisions: a BOOKMARK never follows a non-final frame of a revision. */
    private static void assertNoBookmarkInsideARevision(WatchClient w) {
        List<WatchEvent> frames = w.frames();
        for (int i = 1; i < frames.size(); i++) {
            WatchEvent before = frames.get(i - 1);
            if (frames.get(i).getType() == WatchEvent.Type.BOOKMARK && before.getType() != WatchEvent.Type.BOOKMARK) {
                assertThat(before.getIndex())
                        .as(w.name() + ": bookmark after " + before)
                        .isEqualTo(before.getCount() - 1);
            }
        }
    }

    private static void awaitBookmark(WatchClient w, long revision) throws Exception {
        awaitTrue(
                () -> w.lastBookmark() >= revision,
                Duration.ofSeconds(20),
                w.name() + " gets a bookmark at >= "
                        + revision + " (last frames "
                        + w.frames()
                                .subList(
                                        Math.max(0, w.frames().size() - 3),
                                        w.frames().size())
                        + ")");
    }

    /** Reads every page of a list; returns the revision the pages were read at. */
    private static long listAll(String node, String prefix, int limit, List<String> out) throws Exception {
        String cont = "";
        long revision = -1;
        do {
            String url = node + "/v1/kv?key=" + enc(prefix) + "&prefix=true" + (limit > 0 ? "&limit=" + limit : "")
                    + (cont.isEmpty() ? "" : "&continue=" + enc(cont));
            HttpResponse<String> response = get(url);
            assertThat(response.statusCode()).as(url + ": " + response.body()).isEqualTo(200);
            KeyValueList.Builder page = KeyValueList.newBuilder();
            JsonFormat.parser().merge(response.body(), page);
            assertThat(revision == -1 || page.getResourceVersion() == revision)
                    .as("every page at one revision")
                    .isTrue();
            revision = page.getResourceVersion();
            if (limit > 0) {
                assertThat(page.getKvsCount()).isLessThanOrEqualTo(limit);
            }
            page.getKvsList().forEach(kv -> out.add(EtcdTruth.kvLine(kv)));
            cont = page.getContinue();
        } while (!cont.isEmpty());
        return revision;
    }

    /** The events of the events topic up to {@code lastRevision}, after checking the revision chain. */
    private static List<String> publishedEvents(String bootstrap, String topic, long lastRevision) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, EventsRecordDeserializer.class.getName());
        List<String> out = new ArrayList<>();
        RevisionChain chain = new RevisionChain();
        try (KafkaConsumer<byte[], EventsRecord> consumer = new KafkaConsumer<>(props)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (chain.lastRevision() < lastRevision || !chain.atRevisionBoundary()) {
                assertThat(System.nanoTime())
                        .as("the events topic reaches revision " + lastRevision)
                        .isLessThan(deadline);
                for (ConsumerRecord<byte[], EventsRecord> r : consumer.poll(Duration.ofMillis(500))) {
                    chain.accept(r.value()); // throws on a gap or a repeat
                    if (r.value().hasEvent()
                            && !r.value().getEvent().getResync()
                            && r.value().getEvent().getRevision() <= lastRevision) {
                        Event e = r.value().getEvent();
                        WatchEvent.Type type = e.getType() == Event.Type.DELETE
                                ? WatchEvent.Type.DELETED
                                : e.getKv().getVersion() == 1 ? WatchEvent.Type.ADDED : WatchEvent.Type.MODIFIED;
                        io.watchfanout.schema.v1.KeyValue object =
                                e.getType() == Event.Type.DELETE ? e.getPrevKv() : e.getKv();
                        out.add(EtcdTruth.frameLine(WatchEvent.newBuilder()
                                .setType(type)
                                .setObject(object)
                                .setResourceVersion(e.getRevision())
                                .setIndex(e.getIndex())
                                .setCount(e.getCount())
                                .build()));
                    }
                }
            }
        }
        return out;
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(url))
                        .header("Accept", "application/json")
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            return true;
        } catch (ConnectException e) {
            return false;
        } catch (IOException e) {
            return true; // a timeout: something holds the port
        }
    }

    /** A condition that may throw. */
    @FunctionalInterface
    private interface Condition {
        boolean holds() throws Exception;
    }

    private static void awaitTrue(Condition condition, Duration timeout, String what) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting until " + what);
            }
            Thread.sleep(100);
        }
    }
}
