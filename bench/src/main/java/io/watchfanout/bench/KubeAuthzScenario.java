package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1Rbac;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Authorization at watch start: two fan-out nodes on the same Kafka topics, one with
 * {@code --authorization-mode RBAC} and one with {@code AlwaysAllow}, both authenticating bearer
 * tokens of a {@code --token-auth-file} ({@code user-0 … user-N-1}). The topics hold, as
 * kube-apiserver stores them (protobuf envelopes), a ClusterRole {@code pod-reader} (get, list,
 * watch pods) and one ClusterRoleBinding per user binding it, then the pods of {@link KubePods}:
 * <ul>
 *   <li><b>deliveries</b>: W pod watchers ({@code /api/v1/pods?watch=1}, JSON), each under its own
 *       identity, at a fixed rate of updates; deliveries per node CPU-second on each node, in
 *       alternating rounds (only one node's watchers open at a time), and the ratio RBAC /
 *       AlwaysAllow;</li>
 *   <li><b>starts</b>: S watch starts of distinct users opened at once; starts per second until all
 *       attached and node CPU per start, on each node.</li>
 * </ul>
 */
@Command(
        name = "kube-authz",
        mixinStandardHelpOptions = true,
        description = "RBAC vs AlwaysAllow at watch start: deliveries per node CPU-second of pod watchers under "
                + "distinct identities, and watch starts per second over many bindings.")
final class KubeAuthzScenario implements Callable<Integer> {
    private static final String TOPICS = "authz";
    private static final String NAMESPACE = "bench";
    private static final String RBAC_V1 = "rbac.authorization.k8s.io/v1";

    @Mixin
    CommonOptions common;

    @Option(
            names = "--parts",
            split = ",",
            defaultValue = "deliveries,starts",
            paramLabel = "PART,...",
            description = "What to measure: deliveries, starts (default: ${DEFAULT-VALUE}).")
    List<String> parts;

    @Option(
            names = "--watchers",
            defaultValue = "1000",
            description = "Pod watchers of the deliveries part, each its own user (default: ${DEFAULT-VALUE}).")
    int watchers;

    @Option(
            names = "--users",
            defaultValue = "10000",
            description = "Users in the token file, each with its own ClusterRoleBinding (default: ${DEFAULT-VALUE}).")
    int users;

    @Option(
            names = "--starts",
            defaultValue = "5000",
            description = "Watch starts per round of the starts part, distinct users (default: ${DEFAULT-VALUE}).")
    int starts;

    @Option(
            names = "--rate",
            defaultValue = "100",
            paramLabel = "UPDATES_PER_S",
            description = "Pod updates per second in the deliveries part (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--pods",
            defaultValue = "1000",
            description = "Pods the updates go round (default: ${DEFAULT-VALUE}).")
    int pods;

    @Option(
            names = "--pod-bytes",
            defaultValue = "4096",
            description = "Stored size of a pod (default: ${DEFAULT-VALUE}).")
    int podBytes;

    @Option(
            names = "--client-threads",
            defaultValue = "1",
            description = "Selector threads of the watch client (default: ${DEFAULT-VALUE}).")
    int clientThreads;

    @Override
    public Integer call() throws Exception {
        if (watchers > users || starts > users) {
            throw new IllegalArgumentException("--watchers and --starts must not exceed --users (" + users + ")");
        }
        Progress progress = new Progress();
        Figures f = new Figures();
        Report report = new Report("kube-authz", f);
        Path tokens = Files.createTempFile("bench-authz-tokens", ".csv");
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            writeTokens(tokens);
            stack.startKafka();
            PolicyThenPods objects = new PolicyThenPods();
            KafkaFeeder feeder = new KafkaFeeder(stack.kafka().bootstrapServers(), TOPICS, objects, true);
            stack.closeLater(feeder);
            progress.log("writing the ClusterRole, " + users + " ClusterRoleBindings and " + pods + " pods to Kafka");
            feeder.writeAll(objects.remaining() + pods);
            Map<String, BenchStack.Node> nodes = new LinkedHashMap<>();
            for (String mode : List.of("RBAC", "AlwaysAllow")) {
                nodes.put(
                        mode,
                        stack.startNode(
                                TOPICS,
                                List.of(
                                        "--token-auth-file",
                                        tokens.toString(),
                                        "--authorization-mode",
                                        mode,
                                        "--kube-prefix",
                                        "/registry"),
                                List.of(),
                                "2g"));
            }
            for (BenchStack.Node node : nodes.values()) {
                awaitAllowed(node, feeder.revision(), users - 1, progress);
            }
            // RBAC is in force: system:anonymous (the node also takes requests without credentials)
            // has no binding, so the RBAC node refuses it what AlwaysAllow grants.
            expectAnonymous(nodes.get("RBAC"), 403);
            expectAnonymous(nodes.get("AlwaysAllow"), 200);
            if (parts.contains("deliveries")) {
                deliveries(nodes, feeder, f, report, progress);
            }
            if (parts.contains("starts")) {
                starts(nodes, feeder, f, report, progress);
            }
        } finally {
            Files.deleteIfExists(tokens);
        }
        report.note("two nodes fed from Kafka (no etcd, no ingester) with a ClusterRole, " + users
                + " ClusterRoleBindings (one per user) and " + pods + " pods of ~" + podBytes
                + " B stored as kube-apiserver stores them; bearer tokens from --token-auth-file over plain HTTP; "
                + "the client runs in the bench JVM on the same cores");
        report.write(System.out, common.resultsDir());
        return 0;
    }

    private void deliveries(
            Map<String, BenchStack.Node> nodes, KafkaFeeder feeder, Figures f, Report report, Progress progress)
            throws Exception {
        for (int r = -1; r < common.rounds; r++) {
            for (Map.Entry<String, BenchStack.Node> e : nodes.entrySet()) {
                String row = e.getKey() + " W=" + watchers;
                long from = feeder.revision();
                Map<String, Long> pids = Map.of("node", e.getValue().pid());
                try (WatchTarget t = WatchTarget.streams(
                        e.getValue().port,
                        i -> "/api/v1/pods?watch=1&resourceVersion=" + from,
                        KubeAuthzScenario::bearer,
                        watchers,
                        WatchLoadClient.Format.JSON,
                        clientThreads,
                        0)) {
                    Round.deliveries(feeder, rate, common, r, t, watchers, pids, f, row, progress);
                }
            }
        }
        double rbac = f.median("RBAC W=" + watchers, "deliveries/server-CPU-s");
        double allow = f.median("AlwaysAllow W=" + watchers, "deliveries/server-CPU-s");
        report.ratio(String.format(
                "pods W=%d distinct users at %.0f updates/s: RBAC %.0f / AlwaysAllow %.0f deliveries per node CPU-s "
                        + "= %.2f (target >= 0.95: %s)",
                watchers, rate, rbac, allow, rbac / allow, rbac / allow >= 0.95 ? "met" : "missed"));
    }

    private void starts(
            Map<String, BenchStack.Node> nodes, KafkaFeeder feeder, Figures f, Report report, Progress progress)
            throws Exception {
        long from = feeder.revision();
        for (int r = -1; r < common.rounds; r++) {
            for (Map.Entry<String, BenchStack.Node> e : nodes.entrySet()) {
                String row = e.getKey() + " starts S=" + starts;
                // Each round starts other users' watches where there are enough of them, so that no
                // decision of an earlier round is reused.
                int first = Math.floorMod((r + 1) * starts, users);
                WatchLoadClient c = new WatchLoadClient(
                        new InetSocketAddress("127.0.0.1", e.getValue().port),
                        i -> "/api/v1/pods?watch=1&resourceVersion=" + from,
                        WatchLoadClient.Format.JSON,
                        clientThreads,
                        0);
                try {
                    c.headers(i -> bearer((first + i) % users));
                    double cpu0 = Proc.cpuSeconds(e.getValue().pid());
                    long start = System.nanoTime();
                    c.open(starts);
                    boolean done = c.awaitAttached(TimeUnit.MINUTES.toMillis(5));
                    double secs = (System.nanoTime() - start) / 1e9;
                    double cpu = Proc.cpuSeconds(e.getValue().pid()) - cpu0;
                    if (!done || c.failed() > 0) {
                        throw new IllegalStateException(row + ": " + c.attached() + " of " + starts + " attached, "
                                + c.failed() + " failed: " + c.lastError());
                    }
                    progress.log(String.format(
                            "%s%s: %.0f starts/s, node %.0f µs CPU per start",
                            row, r < 0 ? " (warm-up)" : " round " + (r + 1), starts / secs, 1e6 * cpu / starts));
                    if (r >= 0) {
                        f.add(row, "starts/s", starts / secs);
                        f.add(row, "node CPU µs/start", 1e6 * cpu / starts);
                    }
                } finally {
                    c.close();
                }
                Thread.sleep(1000); // the node closes the streams before the next round
            }
        }
        double rbac = f.median("RBAC starts S=" + starts, "starts/s");
        double allow = f.median("AlwaysAllow starts S=" + starts, "starts/s");
        report.ratio(String.format(
                "watch starts of %d distinct users over %d ClusterRoleBindings: RBAC %.0f/s (%.0f µs node CPU each), "
                        + "AlwaysAllow %.0f/s (%.0f µs) = %.2f",
                starts,
                users,
                rbac,
                f.median("RBAC starts S=" + starts, "node CPU µs/start"),
                allow,
                f.median("AlwaysAllow starts S=" + starts, "node CPU µs/start"),
                rbac / allow));
    }

    /** The header line of user {@code i}'s bearer token. */
    private static String bearer(int i) {
        return "Authorization: Bearer " + token(i) + "\r\n";
    }

    private static String token(int i) {
        return "bench-token-" + i;
    }

    /** kube-apiserver's --token-auth-file: {@code token,user,uid} per user. */
    private void writeTokens(Path file) throws IOException {
        StringBuilder csv = new StringBuilder();
        for (int i = 0; i < users; i++) {
            csv.append(token(i))
                    .append(",user-")
                    .append(i)
                    .append(",uid-")
                    .append(i)
                    .append('\n');
        }
        Files.writeString(file, csv);
    }

    /**
     * Waits until {@code node} has applied {@code revision} and allows user {@code user} to list
     * pods: a list at that revision with the user's token answers 200.
     */
    private static void awaitAllowed(BenchStack.Node node, long revision, int user, Progress progress)
            throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port
                        + "/api/v1/pods?limit=1&resourceVersion=" + revision + "&resourceVersionMatch=NotOlderThan"))
                .header("Authorization", "Bearer " + token(user))
                .timeout(Duration.ofMinutes(1))
                .build();
        int status = 0;
        for (int i = 0; i < 300; i++) {
            status = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
            if (status == 200) {
                progress.log("node on port " + node.port + " is at revision " + revision + " and allows user-" + user);
                return;
            }
            Thread.sleep(1000);
        }
        throw new IllegalStateException("node on port " + node.port + ": list as user-" + user + ": " + status);
    }

    /** Checks that a list of pods without credentials answers {@code expected}. */
    private static void expectAnonymous(BenchStack.Node node, int expected) throws IOException, InterruptedException {
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        int status = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port + "/api/v1/pods?limit=1"))
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
        if (status != expected) {
            throw new IllegalStateException(
                    "node on port " + node.port + ": anonymous list of pods: " + status + ", expected " + expected);
        }
    }

    /**
     * The feeder's objects: first the ClusterRole and the ClusterRoleBindings, each once, then pod
     * {@code r % pods} at revision r.
     */
    private final class PolicyThenPods implements KafkaFeeder.Objects {
        private final Deque<ByteString[]> policy = new ArrayDeque<>();
        private final Map<ByteString, Integer> podIndex = new HashMap<>();
        private final List<ByteString> podKeys = new ArrayList<>();
        private ByteString pendingValue;

        PolicyThenPods() {
            policy.add(new ByteString[] {BenchEvents.key("/registry/clusterroles/pod-reader"), clusterRole()});
            for (int i = 0; i < users; i++) {
                String name = "pod-reader-user-" + i;
                policy.add(new ByteString[] {
                    BenchEvents.key("/registry/clusterrolebindings/" + name), clusterRoleBinding(name, "user-" + i)
                });
            }
            for (int i = 0; i < pods; i++) {
                ByteString key = KubePods.key(NAMESPACE, "pod-" + i);
                podKeys.add(key);
                podIndex.put(key, i);
            }
        }

        int remaining() {
            return policy.size();
        }

        @Override
        public ByteString key(long revision) {
            ByteString[] next = policy.poll();
            if (next != null) {
                pendingValue = next[1];
                return next[0];
            }
            pendingValue = null;
            return podKeys.get((int) (revision % pods));
        }

        @Override
        public ByteString value(long revision, ByteString key) {
            if (pendingValue != null) {
                return pendingValue;
            }
            int i = podIndex.get(key);
            return KubePods.pod(NAMESPACE, "pod-" + i, "node-" + (i % 100), podBytes, revision);
        }
    }

    private static ByteString clusterRole() {
        V1Rbac.ClusterRole role = V1Rbac.ClusterRole.newBuilder()
                .setMetadata(meta("pod-reader"))
                .addRules(V1Rbac.PolicyRule.newBuilder()
                        .addVerbs("get")
                        .addVerbs("list")
                        .addVerbs("watch")
                        .addApiGroups("")
                        .addResources("pods"))
                .build();
        return KubePods.envelope(RBAC_V1, "ClusterRole", role.toByteString());
    }

    private static ByteString clusterRoleBinding(String name, String user) {
        V1Rbac.ClusterRoleBinding binding = V1Rbac.ClusterRoleBinding.newBuilder()
                .setMetadata(meta(name))
                .addSubjects(V1Rbac.Subject.newBuilder()
                        .setKind("User")
                        .setApiGroup("rbac.authorization.k8s.io")
                        .setName(user))
                .setRoleRef(V1Rbac.RoleRef.newBuilder()
                        .setApiGroup("rbac.authorization.k8s.io")
                        .setKind("ClusterRole")
                        .setName("pod-reader"))
                .build();
        return KubePods.envelope(RBAC_V1, "ClusterRoleBinding", binding.toByteString());
    }

    private static Meta.ObjectMeta meta(String name) {
        return Meta.ObjectMeta.newBuilder()
                .setName(name)
                .setUid("0b5c1d2e-" + Integer.toHexString(name.hashCode()))
                .setCreationTimestamp(Meta.Time.newBuilder().setSeconds(1_700_000_000L))
                .build();
    }
}
