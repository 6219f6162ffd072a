package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The Kubernetes API of a fan-out node against its own {@code /v1/watch}, fed straight from Kafka
 * with pods as kube-apiserver stores them (protobuf envelopes, {@link KubePods}):
 * <ul>
 *   <li><b>pods</b>: W pod watchers at a fixed rate of updates, on {@code /v1/watch} (JSON),
 *       {@code /api/v1/pods?watch=1} in JSON and in protobuf; deliveries per node CPU-second of
 *       each, measured in alternating rounds, and their ratios to {@code /v1/watch};</li>
 *   <li><b>node-scoped</b>: W watchers each of one node's pods ({@code fieldSelector=spec.nodeName=…},
 *       protobuf, the kubelet's watch), every update delivered to exactly one of them; node CPU per
 *       event at each W, and the ratio of the largest W to the smallest;</li>
 *   <li><b>list</b>: a list of many pods, unpaged and paged: time, bytes sent, and the bytes the node
 *       allocated per byte sent ({@code watchfanout_heap_allocated_bytes_total}).</li>
 * </ul>
 * With {@code --baseline-jar}, a second node of other code (e.g. the build before a change) serves
 * the same topics, every part measures it beside this checkout's node in the same rounds, and the
 * report gives this checkout's figures as ratios to the baseline's.
 */
@Command(
        name = "kube",
        mixinStandardHelpOptions = true,
        description = "The Kubernetes API vs the node's own /v1/watch: pod watchers in JSON and protobuf, node-scoped "
                + "watchers, and lists of many pods, paged and unpaged.")
final class KubeScenario implements Callable<Integer> {
    private static final String TOPICS = "kube";

    @Mixin
    CommonOptions common;

    @Option(
            names = "--parts",
            split = ",",
            defaultValue = "pods,node-scoped,list",
            paramLabel = "PART,...",
            description = "What to measure: pods, node-scoped, list (default: ${DEFAULT-VALUE}).")
    List<String> parts;

    @Option(
            names = "--watchers",
            defaultValue = "1000",
            description = "Pod watchers of the pods part (default: ${DEFAULT-VALUE}).")
    int watchers;

    @Option(
            names = "--rate",
            defaultValue = "100",
            paramLabel = "UPDATES_PER_S",
            description = "Pod updates per second in the watch parts (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--pod-bytes",
            defaultValue = "4096",
            description = "Stored size of a pod (default: ${DEFAULT-VALUE}).")
    int podBytes;

    @Option(
            names = "--node-scoped",
            split = ",",
            defaultValue = "100,5000",
            paramLabel = "W,...",
            description = "Node-scoped watcher counts (default: ${DEFAULT-VALUE}).")
    List<Integer> nodeScoped;

    @Option(
            names = "--list-pods",
            defaultValue = "100000",
            description = "Pods in the listed namespace (default: ${DEFAULT-VALUE}).")
    int listPods;

    @Option(
            names = "--page",
            defaultValue = "500",
            description = "Page size of the paged list (default: ${DEFAULT-VALUE}).")
    int page;

    @Option(
            names = "--client-threads",
            defaultValue = "1",
            description = "Selector threads of the watch client (default: ${DEFAULT-VALUE}).")
    int clientThreads;

    @Option(
            names = "--baseline-jar",
            paramLabel = "JAR",
            description = "A fan-out node jar of other code (e.g. before a change): a second node on the same topics, "
                    + "measured beside this checkout's in every part and round; ratios this / baseline.")
    Path baselineJar;

    /** What the feeder writes: pod {@code index % pods} of {@code namespace} on node {@code index % nodes}. */
    private volatile String namespace = "bench";

    private volatile int pods = 1000;
    private volatile int nodes = 100;
    private final Map<ByteString, Integer> podIndex = new HashMap<>();

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        Report report;
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startKafka();
            KafkaFeeder feeder = new KafkaFeeder(stack.kafka().bootstrapServers(), TOPICS, new Pods(), true);
            stack.closeLater(feeder);
            List<NodeVariant> nodes = NodeVariant.start(stack, baselineJar, TOPICS, "3g");
            report = new Report("kube", f);
            if (parts.contains("pods")) {
                pods(nodes, feeder, f, report, progress);
            }
            if (parts.contains("node-scoped")) {
                nodeScoped(nodes, feeder, f, report, progress);
            }
            if (parts.contains("list")) {
                list(nodes, feeder, f, report, progress);
            }
        }
        report.note("node fed from Kafka (no etcd, no ingester) with pods of ~" + podBytes
                + " B stored as kube-apiserver stores them; the client runs in the bench JVM on the same 2 cores");
        report.write(System.out, common.resultsDir());
        return 0;
    }

    private void pods(List<NodeVariant> nodes, KafkaFeeder feeder, Figures f, Report report, Progress progress)
            throws Exception {
        feed("bench", 1000, 100);
        // Every pod exists before the watches start, so that each update is a MODIFIED of a known pod.
        feeder.writeAll(1000);
        Map<String, IntFunction<String>> targets = new LinkedHashMap<>();
        Map<String, WatchLoadClient.Format> formats = new LinkedHashMap<>();
        targets.put("/v1/watch JSON", i -> "/v1/watch?key=" + KubePods.PREFIX + "&prefix=true");
        formats.put("/v1/watch JSON", WatchLoadClient.Format.JSON);
        targets.put("kube JSON", i -> "/api/v1/pods?watch=1");
        formats.put("kube JSON", WatchLoadClient.Format.JSON);
        targets.put("kube protobuf", i -> "/api/v1/pods?watch=1");
        formats.put("kube protobuf", WatchLoadClient.Format.KUBE_PROTOBUF);
        for (int r = -1; r < common.rounds; r++) {
            for (NodeVariant v : nodes) {
                for (String name : targets.keySet()) {
                    podRound(v, name, targets.get(name), formats.get(name), feeder, r, f, progress);
                }
            }
        }
        for (NodeVariant v : nodes) {
            double raw = f.median("/v1/watch JSON W=" + watchers + v.label(), "deliveries/server-CPU-s");
            for (String name : List.of("kube JSON", "kube protobuf")) {
                double kube = f.median(name + " W=" + watchers + v.label(), "deliveries/server-CPU-s");
                report.ratio(String.format(
                        "pods W=%d at %.0f updates/s%s: %s %.0f / /v1/watch %.0f deliveries per node CPU-s = %.2f "
                                + "(target >= 1.0: %s)",
                        watchers, rate, v.label(), name, kube, raw, kube / raw, kube / raw >= 1.0 ? "met" : "missed"));
            }
        }
        for (String name : targets.keySet()) {
            NodeVariant.baselineRatio(nodes, f, report, name + " W=" + watchers, "deliveries/server-CPU-s");
        }
    }

    /** One round of W pod watchers of {@code name} on {@code v}'s node; round -1 warms up. */
    private void podRound(
            NodeVariant v,
            String name,
            IntFunction<String> target,
            WatchLoadClient.Format format,
            KafkaFeeder feeder,
            int r,
            Figures f,
            Progress progress)
            throws Exception {
        Map<String, Long> pids = new LinkedHashMap<>();
        pids.put("node", v.node().pid());
        pids.put("client", Proc.self());
        String row = name + " W=" + watchers + v.label();
        long from = feeder.revision();
        try (WatchTarget t = WatchTarget.streams(
                v.node().port, i -> target.apply(i) + "&resourceVersion=" + from, watchers, format, clientThreads, 0)) {
            Round.deliveries(feeder, rate, common, r, t, watchers, pids, f, row, progress);
        }
    }

    private void nodeScoped(List<NodeVariant> nodes, KafkaFeeder feeder, Figures f, Report report, Progress progress)
            throws Exception {
        for (int w : nodeScoped) {
            String ns = "scoped-" + w;
            feed(ns, w, w);
            feeder.writeAll(w);
            for (NodeVariant v : nodes) {
                nodeScopedRounds(v, w, feeder, f, progress);
            }
        }
        for (NodeVariant v : nodes) {
            int lo = nodeScoped.get(0);
            int hi = nodeScoped.get(nodeScoped.size() - 1);
            double a = f.median("node-scoped W=" + lo + v.label(), "node CPU µs/event");
            double b = f.median("node-scoped W=" + hi + v.label(), "node CPU µs/event");
            report.ratio(String.format(
                    "node-scoped%s: node CPU per event at W=%d %.0f µs / at W=%d %.0f µs = %.2f (target <= 1.5: %s)",
                    v.label(), hi, b, lo, a, b / a, b / a <= 1.5 ? "met" : "missed"));
        }
        for (int w : nodeScoped) {
            NodeVariant.baselineRatio(nodes, f, report, "node-scoped W=" + w, "node CPU µs/event");
        }
    }

    /** W node-scoped protobuf watchers on {@code v}'s node: a warm-up, then the rounds. */
    private void nodeScopedRounds(NodeVariant v, int w, KafkaFeeder feeder, Figures f, Progress progress)
            throws Exception {
        BenchStack.Node node = v.node();
        Map<String, Long> pids = Map.of("node", node.pid());
        String row = "node-scoped W=" + w + v.label();
        long from = feeder.revision();
        try (WatchTarget t = WatchTarget.streams(
                node.port,
                i -> "/api/v1/pods?watch=1&resourceVersion=" + from + "&fieldSelector="
                        + URLEncoder.encode("spec.nodeName=node-" + i, StandardCharsets.UTF_8),
                w,
                WatchLoadClient.Format.KUBE_PROTOBUF,
                clientThreads,
                0)) {
            Round.warmUp(feeder, rate, common.warmup, t::deliveries, progress, row);
            for (int r = 0; r < common.rounds; r++) {
                Map<String, Double> m0 = node.metrics();
                Round.Result res = Round.run(
                        feeder,
                        rate,
                        common.duration.toNanos(),
                        pids,
                        t::deliveries,
                        null,
                        progress,
                        row + " round " + (r + 1) + "/" + common.rounds);
                Map<String, Double> m1 = node.metrics();
                double events = Math.max(1, res.puts);
                f.add(row, "events/s", res.putsPerSecond);
                f.add(row, "delivered per event", res.deliveries / events);
                f.add(row, "node CPU µs/event", 1e6 * res.cpuSeconds.get("node") / events);
                f.add(
                        row,
                        "watchers visited/event",
                        (BenchStack.sum(m1, "watchfanout_watcher_visits_total")
                                        - BenchStack.sum(m0, "watchfanout_watcher_visits_total"))
                                / events);
            }
        }
    }

    private void list(List<NodeVariant> nodes, KafkaFeeder feeder, Figures f, Report report, Progress progress)
            throws Exception {
        feed("list", listPods, 1000);
        progress.log("writing " + listPods + " pods to Kafka");
        feeder.writeAll(listPods);
        long revision = feeder.revision();
        HttpClient http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        for (NodeVariant v : nodes) {
            awaitRevision(http, v.node(), revision);
        }
        for (int r = -1; r < common.rounds; r++) {
            for (NodeVariant v : nodes) {
                listRound(http, v, r, f, progress);
            }
        }
        for (NodeVariant v : nodes) {
            for (String format : List.of("JSON", "protobuf")) {
                for (String paging : List.of("unpaged", "paged by " + page)) {
                    String row = "list " + listPods + " pods " + format + " " + paging + v.label();
                    double ratio = f.median(row, "allocated / sent");
                    report.ratio(String.format(
                            "%s: %.2f s, bytes allocated per byte sent %.3f (target <= 0.2: %s)",
                            row, f.median(row, "seconds"), ratio, ratio <= 0.2 ? "met" : "missed"));
                }
            }
        }
        for (String format : List.of("JSON", "protobuf")) {
            for (String paging : List.of("unpaged", "paged by " + page)) {
                String row = "list " + listPods + " pods " + format + " " + paging;
                NodeVariant.baselineRatio(nodes, f, report, row, "node CPU-s");
                NodeVariant.baselineRatio(nodes, f, report, row, "allocated / sent");
            }
        }
    }

    /** Waits until {@code node} serves {@code revision}: the first page at it waits until the node applied it. */
    private static void awaitRevision(HttpClient http, BenchStack.Node node, long revision) throws Exception {
        String base = "http://127.0.0.1:" + node.port + "/api/v1/namespaces/list/pods";
        // The first page at the last revision written waits until the node has applied it.
        for (int i = 0; ; i++) {
            Page p = get(
                    http, base + "?limit=1&resourceVersion=" + revision + "&resourceVersionMatch=NotOlderThan", false);
            if (p.status == 200) {
                break;
            }
            if (i > 120) {
                throw new IllegalStateException("the node did not reach revision " + revision + ": " + p.status);
            }
            Thread.sleep(1000);
        }
    }

    /** Each list (JSON and protobuf, unpaged and paged) once on {@code v}'s node; round -1 warms up. */
    private void listRound(HttpClient http, NodeVariant v, int r, Figures f, Progress progress) throws Exception {
        BenchStack.Node node = v.node();
        String base = "http://127.0.0.1:" + node.port + "/api/v1/namespaces/list/pods";
        for (boolean protobuf : new boolean[] {false, true}) {
            for (int limit : new int[] {0, page}) {
                String row = "list " + listPods + " pods " + (protobuf ? "protobuf" : "JSON")
                        + (limit == 0 ? " unpaged" : " paged by " + limit) + v.label();
                Map<String, Double> m0 = node.metrics();
                double cpu0 = Proc.cpuSeconds(node.pid());
                long start = System.nanoTime();
                long bytes = 0;
                int items = 0;
                int pages = 0;
                String token = "";
                do {
                    String url = base + "?" + (limit == 0 ? "" : "limit=" + limit + "&")
                            + (token.isEmpty() ? "" : "continue=" + URLEncoder.encode(token, StandardCharsets.UTF_8));
                    Page p = get(http, url, protobuf);
                    if (p.status != 200) {
                        throw new IllegalStateException(url + ": " + p.status);
                    }
                    bytes += p.bytes;
                    items += p.items;
                    token = p.continueToken;
                    pages++;
                } while (!token.isEmpty());
                double secs = (System.nanoTime() - start) / 1e9;
                double cpu = Proc.cpuSeconds(node.pid()) - cpu0;
                Map<String, Double> m1 = node.metrics();
                if (items != listPods) {
                    throw new IllegalStateException(row + ": " + items + " items");
                }
                if (r < 0) {
                    progress.log(row + ": warmed up (" + pages + " pages, " + bytes + " B)");
                    continue;
                }
                double allocated = BenchStack.sum(m1, "watchfanout_heap_allocated_bytes_total")
                        - BenchStack.sum(m0, "watchfanout_heap_allocated_bytes_total");
                f.add(row, "seconds", secs);
                f.add(row, "MiB sent", bytes / (1024.0 * 1024.0));
                f.add(row, "node CPU-s", cpu);
                f.add(row, "allocated / sent", allocated / bytes);
                progress.log(String.format(
                        "%s: %.2f s, %d pages, %.1f MiB, allocated/sent %.3f",
                        row, secs, pages, bytes / 1048576.0, allocated / bytes));
            }
        }
    }

    /** Points the feeder at pods {@code 0..pods-1} of {@code namespace}, spread over {@code nodes} nodes. */
    private void feed(String namespace, int pods, int nodes) {
        this.namespace = namespace;
        this.pods = pods;
        this.nodes = nodes;
    }

    private record Page(int status, long bytes, int items, String continueToken) {}

    private static final Pattern CONTINUE = Pattern.compile("\"continue\":\"([^\"]*)\"");
    private static final byte[] ITEM_KIND = "\"nodeName\":".getBytes(StandardCharsets.US_ASCII);

    /** GETs a list page; counts its items and reads its continue token (JSON or protobuf). */
    private static Page get(HttpClient http, String url, boolean protobuf) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create(url))
                .header("Accept", protobuf ? "application/vnd.kubernetes.protobuf" : "application/json")
                .timeout(Duration.ofMinutes(5))
                .build();
        HttpResponse<InputStream> resp = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = resp.body()) {
            ByteArrayOutputStream body = new ByteArrayOutputStream(1 << 20);
            in.transferTo(body);
            byte[] b = body.toByteArray();
            if (resp.statusCode() != 200) {
                return new Page(resp.statusCode(), b.length, 0, "");
            }
            if (protobuf) {
                Runtime.Unknown u = Runtime.Unknown.parseFrom(ByteString.copyFrom(b, 4, b.length - 4));
                V1.PodList list = V1.PodList.parseFrom(u.getRaw());
                return new Page(
                        200, b.length, list.getItemsCount(), list.getMetadata().getContinue());
            }
            String head = new String(b, 0, Math.min(b.length, 4096), StandardCharsets.UTF_8);
            Matcher m = CONTINUE.matcher(head);
            return new Page(200, b.length, count(b, ITEM_KIND), m.find() ? m.group(1) : "");
        }
    }

    /** Occurrences of {@code needle} in {@code b} (one {@code "nodeName":} per pod). */
    private static int count(byte[] b, byte[] needle) {
        int n = 0;
        outer:
        for (int i = 0; i + needle.length <= b.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (b[i + j] != needle[j]) {
                    continue outer;
                }
            }
            n++;
        }
        return n;
    }

    /** The feeder's pods: revision r updates pod {@code r % pods}, on node {@code (r % pods) % nodes}. */
    private final class Pods implements KafkaFeeder.Objects {
        private final Map<String, ByteString> keys = new HashMap<>();

        @Override
        public ByteString key(long revision) {
            int i = (int) (revision % pods);
            String name = namespace + "/pod-" + i;
            ByteString key = keys.computeIfAbsent(name, n -> KubePods.key(namespace, "pod-" + i));
            podIndex.put(key, i);
            return key;
        }

        @Override
        public ByteString value(long revision, ByteString key) {
            int i = podIndex.get(key);
            return KubePods.pod(namespace, "pod-" + i, "node-" + (i % nodes), podBytes, revision);
        }
    }
}
