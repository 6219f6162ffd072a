package io.watchfanout.bench;

import io.etcd.jetcd.Client;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.StackLauncher;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The processes a scenario needs, all on loopback, started with the testkit's
 * {@link StackLauncher}: etcd, a KRaft Kafka broker, the ingester jar and fan-out node jars as
 * child processes. Closing it stops every process it started (and the testkit's reaper kills any
 * left at JVM exit).
 *
 * <p>Thread-safety: start and stop from the scenario's thread.
 */
final class BenchStack implements AutoCloseable {
    static final String TOPIC_PREFIX = "bench";

    private final Path repo;
    private final Progress progress;
    private final StackLauncher tier = new StackLauncher(TOPIC_PREFIX);
    private JavaProcess materializer;
    private EtcdServer etcd;
    private KafkaBroker kafka;
    private JavaProcess ingester;
    private int ingesterPort;
    private final List<AutoCloseable> others = new ArrayList<>();
    private Client client;

    BenchStack(Path repo, Progress progress) {
        this.repo = repo;
        this.progress = progress;
    }

    BenchStack startEtcd() {
        progress.log("starting etcd");
        // A bench writes ~1 KiB at up to ~12 k puts/s: without compaction etcd's 4 GiB quota is
        // full after ~10 minutes and every put fails. Periodic compaction keeps one minute of
        // revisions, as a production etcd does (the ingester is seconds behind at most).
        etcd = tier.startEtcd(
                b -> b.extraArg("--auto-compaction-mode=periodic").extraArg("--auto-compaction-retention=1m"));
        return this;
    }

    BenchStack startKafka() {
        return startKafka(Map.of());
    }

    /** Starts Kafka with broker properties over the testkit's (e.g. {@code log.cleaner.backoff.ms}). */
    BenchStack startKafka(Map<String, String> brokerProperties) {
        progress.log("starting Kafka (KRaft, one node)" + (brokerProperties.isEmpty() ? "" : " " + brokerProperties));
        kafka = tier.startKafka(b -> {
            brokerProperties.forEach(b::brokerProperty);
            return b.maxHeap("1g");
        });
        return this;
    }

    BenchStack startIngester() {
        return startIngester(null, List.of());
    }

    /**
     * Starts the ingester and waits until it is ready.
     *
     * @param jar the ingester jar to run, or null for this repository's
     * @param flags further flags of the ingester (e.g. {@code --compression=zstd})
     */
    BenchStack startIngester(Path jar, List<String> flags) {
        Path run = jar != null ? jar.toAbsolutePath() : StackLauncher.jar(repo, "ingester");
        progress.log("starting the ingester " + run + (flags.isEmpty() ? "" : " " + flags));
        int port = FreePorts.pick();
        JavaProcess.Builder b =
                tier.ingester(JavaProcess.builderForJar(run).name("ingester").maxHeap("512m"), port);
        b.args(flags);
        // BENCH_INGESTER_JAVA_OPTS: extra JVM options of the ingester, e.g. a JFR recording (docs/BENCHMARKS.md).
        javaOpts("BENCH_INGESTER_JAVA_OPTS", "ingester").forEach(b::jvmArg);
        ingester = tier.startReady(b, "ingester", port, Duration.ofSeconds(90));
        ingesterPort = port;
        return this;
    }

    /**
     * Starts the state materializer as a process of its own, the production layout (this
     * repository's ingester jar with {@code --no-publisher}), and waits until it runs.
     */
    BenchStack startMaterializer() {
        Path run = StackLauncher.jar(repo, "ingester");
        progress.log("starting the state materializer " + run + " --no-publisher");
        int port = FreePorts.pick();
        JavaProcess.Builder b = tier.materializer(
                JavaProcess.builderForJar(run).name("materializer").maxHeap("512m"), port);
        javaOpts("BENCH_INGESTER_JAVA_OPTS", "materializer").forEach(b::jvmArg);
        materializer = tier.startReady(b, "materializer", port, Duration.ofSeconds(90));
        return this;
    }

    /** Stops the materializer process, if one runs. */
    void stopMaterializer() {
        if (materializer != null) {
            materializer.close();
            materializer = null;
        }
    }

    /** The materializer process, or null when none runs (the ingester runs it, or nothing does). */
    JavaProcess materializer() {
        return materializer;
    }

    /** Stops the ingester, if one runs (SIGTERM: it finishes its transaction). */
    void stopIngester() {
        if (ingester != null) {
            ingester.close();
            ingester = null;
        }
    }

    /** The ingester's metrics, name (with labels) → value. */
    Map<String, Double> ingesterMetrics() throws IOException, InterruptedException {
        return scrape("http://127.0.0.1:" + ingesterPort + "/metrics");
    }

    /** The whitespace-separated options of an environment variable, {@code {port}} replaced by {@code port}. */
    private static List<String> javaOpts(String variable, String port) {
        String extra = System.getenv(variable);
        List<String> opts = new ArrayList<>();
        if (extra != null && !extra.isBlank()) {
            for (String opt : extra.trim().split("\\s+")) {
                opts.add(opt.replace("{port}", port));
            }
        }
        return opts;
    }

    /** A running fan-out node. */
    static final class Node implements AutoCloseable {
        final JavaProcess process;
        final int port;

        Node(JavaProcess process, int port) {
            this.process = process;
            this.port = port;
        }

        long pid() {
            return process.pid();
        }

        /** The node's metrics, name (with labels) → value. */
        Map<String, Double> metrics() throws IOException, InterruptedException {
            return scrape("http://127.0.0.1:" + port + "/metrics");
        }

        @Override
        public void close() {
            process.close();
        }
    }

    /** Starts a fan-out node with extra flags and JVM options and waits until it is ready. */
    Node startNode(List<String> flags, List<String> jvmArgs, String maxHeap) {
        return startNode(TOPIC_PREFIX, flags, jvmArgs, maxHeap);
    }

    /** As {@link #startNode(List, List, String)} on the topics of {@code topicPrefix}. */
    Node startNode(String topicPrefix, List<String> flags, List<String> jvmArgs, String maxHeap) {
        return startNode(StackLauncher.jar(repo, "fanout-node"), topicPrefix, flags, jvmArgs, maxHeap);
    }

    /** As {@link #startNode(String, List, List, String)} from another node jar (e.g. a build of older code). */
    Node startNode(Path jar, String topicPrefix, List<String> flags, List<String> jvmArgs, String maxHeap) {
        int port = FreePorts.pick();
        // Scenarios that read Kafka alone (rebuild, resume) start no etcd.
        JavaProcess.Builder b = StackLauncher.on(
                        etcd == null ? null : etcd.clientUrl(), kafka.bootstrapServers(), topicPrefix)
                .node(JavaProcess.builderForJar(jar).name("fanout-" + port).maxHeap(maxHeap), port, "bench-" + port);
        if (!flags.contains("--max-feed-staleness")) {
            // Topics that bench's own feeder wrote carry no heartbeats: a node must not call them stale.
            b.args("--max-feed-staleness", "0");
        }
        b.args(flags);
        jvmArgs.forEach(b::jvmArg);
        // BENCH_NODE_JAVA_OPTS: extra JVM options of every node, e.g. a JFR recording (docs/BENCHMARKS.md).
        javaOpts("BENCH_NODE_JAVA_OPTS", Integer.toString(port)).forEach(b::jvmArg);
        progress.log("starting a fan-out node on port " + port + (flags.isEmpty() ? "" : " " + flags));
        JavaProcess p = b.start();
        Node node = new Node(p, port);
        others.add(node);
        StackLauncher.awaitReady(
                p, "fan-out node", "http://127.0.0.1:" + port + "/readyz", Duration.ofMinutes(15), () -> {});
        return node;
    }

    /** Registers something to close with the stack (e.g. a grpc-proxy). */
    void closeLater(AutoCloseable c) {
        others.add(c);
    }

    EtcdServer etcd() {
        return etcd;
    }

    KafkaBroker kafka() {
        return kafka;
    }

    JavaProcess ingester() {
        return ingester;
    }

    /** A shared jetcd client of the stack's etcd. */
    synchronized Client etcdClient() {
        if (client == null) {
            client = Client.builder()
                    .endpoints(etcd.clientUrl())
                    .maxInboundMessageSize(64 << 20)
                    .build();
        }
        return client;
    }

    /** Prometheus text format → sample name (with labels) → value. */
    static Map<String, Double> scrape(String url) throws IOException, InterruptedException {
        return StackLauncher.metrics(url);
    }

    /** Sum of every sample whose name starts with {@code prefix} (all label sets). */
    static double sum(Map<String, Double> metrics, String prefix) {
        double s = 0;
        for (Map.Entry<String, Double> e : metrics.entrySet()) {
            String k = e.getKey();
            if (k.equals(prefix) || k.startsWith(prefix + "{")) {
                s += e.getValue();
            }
        }
        return s;
    }

    @Override
    public void close() {
        if (client != null) {
            client.close();
        }
        for (int i = others.size() - 1; i >= 0; i--) {
            try {
                others.get(i).close();
            } catch (Exception e) {
                progress.log("closing " + others.get(i) + ": " + e);
            }
        }
        tier.close(); // the ingester, Kafka, etcd
    }
}
