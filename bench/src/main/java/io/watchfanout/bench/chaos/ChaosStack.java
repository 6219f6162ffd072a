package io.watchfanout.bench.chaos;

import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaCluster;
import io.watchfanout.testkit.StackLauncher;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The tier under test, on loopback: one etcd, Kafka (one broker, or a {@link KafkaCluster} of
 * three), two ingester replicas with {@code --leader-election} and three fan-out nodes, each a
 * {@link Part} that can be killed, terminated, stopped and continued, and started again on the
 * same ports and data. Logs go to the run directory, appended across restarts. The processes
 * start through the testkit's {@link StackLauncher}, which gives the ingesters and nodes their
 * flags and stops etcd and Kafka at the end.
 *
 * <p>Thread-safety: faults and starts from the scenario's thread; {@link #notReady()} from any.
 */
final class ChaosStack implements AutoCloseable {
    static final String TOPIC_PREFIX = "chaos";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    /** What a part is. */
    enum Kind {
        ETCD,
        KAFKA,
        INGESTER,
        NODE
    }

    /** One process of the tier. */
    abstract static class Part {
        final String name;
        final Kind kind;

        Part(String name, Kind kind) {
            this.name = name;
            this.kind = kind;
        }

        abstract long pid();

        abstract boolean alive();

        /** SIGKILL, and waits until it is gone. */
        abstract void kill();

        /** SIGTERM, and waits until it exited (SIGKILL after 30 s). */
        abstract void term();

        /**
         * Starts it again: waits until etcd serves; a Kafka broker and the JVMs start in the
         * background, and {@link #notReady} says so until they serve.
         */
        abstract void start();

        /** "" when it is ready, else why not. */
        abstract String notReady();

        @Override
        public String toString() {
            return name;
        }
    }

    private final Path runDir;
    private final Path jars;
    private final int brokers;
    private final Consumer<String> log;
    private final StackLauncher tier = new StackLauncher(TOPIC_PREFIX);
    private EtcdServer etcd;
    private KafkaBroker kafka;
    private KafkaCluster cluster;
    private final List<Part> parts = new ArrayList<>();
    private final List<JavaPart> ingesters = new ArrayList<>();
    private final List<JavaPart> nodes = new ArrayList<>();
    /** Called with each ingester or node right after it started (again); set before {@link #start}. */
    private volatile Consumer<JavaPart> onStart = p -> {};

    ChaosStack(Path repo, Path runDir, int brokers, Consumer<String> log) {
        this.jars = repo;
        this.runDir = runDir;
        this.brokers = brokers;
        this.log = log;
    }

    /** What to do with an ingester or node process right after each of its starts (e.g. move it into a cgroup). */
    void onStart(Consumer<JavaPart> action) {
        this.onStart = action;
    }

    ChaosStack start(List<String> ingesterFlags, List<String> nodeFlags) throws InterruptedException {
        log.accept("starting etcd");
        etcd = tier.startEtcd(b -> b.workDir(runDir.resolve("etcd")));
        parts.add(new Part("etcd", Kind.ETCD) {
            @Override
            long pid() {
                return etcd.pid();
            }

            @Override
            boolean alive() {
                return etcd.isAlive();
            }

            @Override
            void kill() {
                etcd.kill();
            }

            @Override
            void term() {
                etcd.stop();
            }

            @Override
            void start() {
                etcd.start();
            }

            @Override
            String notReady() {
                return probe(etcd.clientUrl() + "/health", false);
            }
        });
        List<KafkaBroker> list;
        if (brokers == 1) {
            log.accept("starting Kafka (KRaft, one node)");
            kafka = tier.startKafka(b -> b.maxHeap("768m").workDir(runDir.resolve("kafka")));
            list = List.of(kafka);
        } else {
            log.accept("starting Kafka (KRaft, " + brokers + " broker+controller nodes)");
            cluster = tier.startKafkaCluster(b -> b.size(brokers).workDir(runDir.resolve("kafka")));
            list = cluster.brokers();
        }
        for (int i = 0; i < list.size(); i++) {
            KafkaBroker b = list.get(i);
            parts.add(new Part("kafka-" + (i + 1), Kind.KAFKA) {
                /**
                 * The restart in progress or done, or null before the first. A broker's start waits
                 * until the controller has registered it, seconds in which the two other brokers
                 * serve: it runs beside the recovery, so that the marker is written when the fault
                 * ended and the watchers' stall is theirs, not the broker's restart.
                 */
                private volatile CompletableFuture<Void> starting;

                @Override
                long pid() {
                    return b.pid();
                }

                @Override
                boolean alive() {
                    CompletableFuture<Void> s = starting;
                    return (s != null && !s.isDone()) || b.isAlive();
                }

                @Override
                void kill() {
                    b.kill();
                }

                @Override
                void term() {
                    b.stop();
                }

                @Override
                void start() {
                    starting = CompletableFuture.runAsync(b::start, task -> {
                        Thread t = new Thread(task, name + " start");
                        t.setDaemon(true);
                        t.start();
                    });
                }

                @Override
                String notReady() {
                    CompletableFuture<Void> s = starting;
                    if (s != null && !s.isDone()) {
                        return "starting";
                    }
                    if (s != null && s.isCompletedExceptionally()) {
                        return "did not start: "
                                + s.handle((ok, e) -> String.valueOf(e)).join();
                    }
                    return b.isAlive() ? "" : "not running";
                }
            });
        }
        Path ingesterJar = StackLauncher.jar(jars, "ingester");
        for (int i = 1; i <= 2; i++) {
            int port = FreePorts.pick();
            List<String> args = new ArrayList<>(List.of("--leader-election"));
            if (brokers >= 3) {
                args.addAll(List.of("--replication-factor", "3", "--min-insync-replicas", "2"));
            }
            args.addAll(ingesterFlags);
            JavaPart p = new JavaPart(
                    "ingester-" + i,
                    Kind.INGESTER,
                    ingesterJar,
                    "384m",
                    b -> tier.ingester(b, port).args(args),
                    port);
            ingesters.add(p);
            parts.add(p);
        }
        log.accept("starting 2 ingester replicas (--leader-election)");
        for (JavaPart p : ingesters) {
            p.start();
        }
        await(() -> ingestersNotReady(), Duration.ofMinutes(3), "the ingesters");
        Path nodeJar = StackLauncher.jar(jars, "fanout-node");
        for (int i = 1; i <= 3; i++) {
            int port = FreePorts.pick();
            String nodeId = "chaos-" + i;
            JavaPart p = new JavaPart(
                    "node-" + i,
                    Kind.NODE,
                    nodeJar,
                    "384m",
                    b -> tier.node(b, port, nodeId).args(nodeFlags),
                    port);
            nodes.add(p);
            parts.add(p);
        }
        log.accept("starting 3 fan-out nodes");
        for (JavaPart p : nodes) {
            p.start();
        }
        await(this::notReady, Duration.ofMinutes(3), "the tier");
        return this;
    }

    private void await(Supplier<String> notReady, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String why;
        while (!(why = notReady.get()).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + " not ready within " + timeout + ": " + why);
            }
            Thread.sleep(200);
        }
    }

    List<Part> parts() {
        return parts;
    }

    String etcdUrl() {
        return etcd.clientUrl();
    }

    String bootstrapServers() {
        return cluster != null ? cluster.bootstrapServers() : kafka.bootstrapServers();
    }

    /** The port of etcd's client URL. */
    int etcdPort() {
        return URI.create(etcd.clientUrl()).getPort();
    }

    /** The brokers' client ports, in the order of the parts kafka-1, kafka-2, ... */
    List<Integer> brokerPorts() {
        List<KafkaBroker> list = cluster != null ? cluster.brokers() : List.of(kafka);
        return list.stream().map(KafkaBroker::brokerPort).toList();
    }

    List<JavaPart> ingesters() {
        return ingesters;
    }

    List<JavaPart> nodes() {
        return nodes;
    }

    int[] nodePorts() {
        return nodes.stream().mapToInt(n -> n.port).toArray();
    }

    /** The broker leading the events topic (3 brokers), or null. */
    String eventsLeader() {
        if (cluster == null) {
            return null;
        }
        try {
            return "kafka-" + cluster.leader(TOPIC_PREFIX + ".events").nodeId();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Whether the ingester part publishes (its /readyz answers 200). */
    boolean isLeader(Part p) {
        return p.kind == Kind.INGESTER
                && probe("http://127.0.0.1:" + ((JavaPart) p).port + "/readyz", false)
                        .isEmpty();
    }

    /**
     * "" when the tier is ready: etcd healthy, every broker running (and, with 3, every partition
     * of the topics fully replicated), both ingesters running, one publishing and the other a
     * standby, every node ready; else what is not.
     */
    String notReady() {
        List<String> why = new ArrayList<>();
        for (Part p : parts) {
            if (p.kind == Kind.INGESTER) {
                continue;
            }
            String r = p.notReady();
            if (!r.isEmpty()) {
                why.add(p.name + ": " + r);
            }
        }
        String ing = ingestersNotReady();
        if (!ing.isEmpty()) {
            why.add(ing);
        }
        if (why.isEmpty() && cluster != null) {
            try {
                cluster.awaitFullyReplicated(
                        Duration.ZERO, TOPIC_PREFIX + ".events", TOPIC_PREFIX + ".state", "__transaction_state");
            } catch (RuntimeException e) {
                why.add("kafka: " + e.getMessage());
            }
        }
        return String.join("; ", why);
    }

    private String ingestersNotReady() {
        int leaders = 0;
        List<String> why = new ArrayList<>();
        for (JavaPart p : ingesters) {
            String r = p.notReady();
            if (r.isEmpty()) {
                leaders++;
            } else if (!r.contains("standby")) {
                why.add(p.name + ": " + r);
            }
        }
        if (why.isEmpty() && leaders != 1) {
            why.add("ingesters: " + leaders + " publishing");
        }
        return String.join("; ", why);
    }

    /** "" on 200, else the status and body or the error. */
    static String probe(String url, boolean quiet) {
        try {
            HttpResponse<String> r = get(url);
            if (r.statusCode() == 200) {
                return "";
            }
            String body = r.body().strip();
            return "HTTP " + r.statusCode()
                    + (quiet || body.isEmpty() ? "" : " " + body.substring(0, Math.min(200, body.length())));
        } catch (IOException e) {
            return e.getClass().getSimpleName();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** The body of a 200 answer, or null (another status, no answer within 2 s). */
    static String body(String url) {
        try {
            HttpResponse<String> r = get(url);
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(2))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The watch streams the running nodes hold ({@code watchfanout_watchers}, summed); -1 when one does not answer. */
    long openStreams() {
        long sum = 0;
        for (JavaPart n : nodes) {
            String text = body("http://127.0.0.1:" + n.port + "/metrics");
            double v = text == null ? Double.NaN : MetricsText.sum(text, "watchfanout_watchers", "");
            if (Double.isNaN(v)) {
                return -1;
            }
            sum += (long) v;
        }
        return sum;
    }

    /** Sends a signal (STOP, CONT) to a process. */
    static void signal(long pid, String signal) {
        try {
            Process p = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            p.waitFor();
        } catch (IOException e) {
            throw new IllegalStateException("kill -" + signal + " " + pid + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** An ingester or fan-out node JVM, started again on the same port and log file. */
    final class JavaPart extends Part {
        final Path jar;
        final String heap;
        /** Adds the part's flags to its process. */
        final UnaryOperator<JavaProcess.Builder> flags;

        final int port;
        private volatile JavaProcess process;

        JavaPart(String name, Kind kind, Path jar, String heap, UnaryOperator<JavaProcess.Builder> flags, int port) {
            super(name, kind);
            this.jar = jar;
            this.heap = heap;
            this.flags = flags;
            this.port = port;
        }

        @Override
        long pid() {
            return process.pid();
        }

        @Override
        boolean alive() {
            JavaProcess p = process;
            return p != null && p.isAlive();
        }

        @Override
        void kill() {
            process.kill();
        }

        @Override
        void term() {
            process.stop(Duration.ofSeconds(30));
        }

        @Override
        void start() {
            Path dir = runDir.resolve(name);
            process = flags.apply(JavaProcess.builderForJar(jar)
                            .name(name)
                            .maxHeap(heap)
                            .logFile(dir.resolve(name + ".log"))
                            .workingDirectory(dir))
                    .start();
            onStart.accept(this);
        }

        @Override
        String notReady() {
            if (!alive()) {
                return "not running";
            }
            return probe("http://127.0.0.1:" + port + "/readyz", false);
        }

        Path logFile() {
            return runDir.resolve(name).resolve(name + ".log");
        }

        /** " with code N" once it exited, else "". */
        String exitCode() {
            JavaProcess p = process;
            return p == null || p.exitCode().isEmpty()
                    ? ""
                    : " with code " + p.exitCode().getAsInt();
        }
    }

    @Override
    public void close() {
        for (Part p : parts) {
            try {
                if (p.alive()) {
                    signal(p.pid(), "CONT");
                }
            } catch (RuntimeException e) {
                // not started
            }
        }
        for (int i = nodes.size() - 1; i >= 0; i--) {
            closeQuietly(nodes.get(i));
        }
        for (JavaPart p : ingesters) {
            closeQuietly(p);
        }
        tier.close(); // Kafka, etcd
    }

    private void closeQuietly(JavaPart p) {
        try {
            if (p.alive()) {
                p.term();
            }
        } catch (RuntimeException e) {
            log.accept("stopping " + p.name + ": " + e);
        }
    }
}
