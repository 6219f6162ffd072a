package io.watchfanout.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLContext;

/**
 * The watch-fanout tier as child processes on loopback: etcd ({@link EtcdServer}), Kafka
 * ({@link KafkaBroker} or {@link KafkaCluster}), the ingester and fan-out nodes ({@link JavaProcess}
 * of their jars or main classes), on one topic prefix. The local stack, the benchmarks and the
 * end-to-end tests start their processes through it, so that an ingester or a node is always
 * given the same flags and is ready when {@code /readyz} answers 200.
 *
 * <p>A launcher either starts etcd and Kafka itself ({@link #startEtcd}, {@link #startKafka},
 * {@link #startKafkaCluster}) or runs on servers that are someone else's ({@link #on}, e.g. the
 * shared servers of a test JVM). {@link #close()} stops, in reverse order, every process it
 * started: nodes, ingesters, then Kafka and etcd. The testkit's reaper kills whatever is left at
 * JVM exit in any case.
 *
 * <p>Thread-safety: the start methods and {@link #close()} are synchronized; the accessors may
 * be called from any thread. Errors are {@link IllegalStateException}s whose message names the
 * process's log and holds its last lines.
 */
public final class StackLauncher implements AutoCloseable {
    /** The address every process of the tier binds and is reached on. */
    public static final String HOST = "127.0.0.1";

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final int LOG_TAIL_LINES = 30;
    /** The exit status of the runnables (picocli's) for flags they refuse, after the message and their usage. */
    private static final int USAGE_EXIT_CODE = 2;
    /** A log longer than this is not searched for a usage error: its tail is shown. */
    private static final long MAX_USAGE_LOG_BYTES = 1 << 20;

    private final String topicPrefix;
    private final List<AutoCloseable> started = new ArrayList<>(); // guarded by this
    private volatile String etcdUrl;
    private volatile String kafkaBootstrap;

    /**
     * A launcher that starts etcd and Kafka itself.
     *
     * @param topicPrefix the topic prefix of the ingester and the nodes
     */
    public StackLauncher(String topicPrefix) {
        this.topicPrefix = Objects.requireNonNull(topicPrefix, "topicPrefix");
    }

    /**
     * A launcher on running servers that it does not own (it never stops them).
     *
     * @param etcdUrl etcd's client URL, e.g. {@link EtcdServer#clientUrl()}; null for fan-out nodes
     *     only, which read Kafka alone
     * @param kafkaBootstrap Kafka's {@code bootstrap.servers}
     * @param topicPrefix the topic prefix of the ingester and the nodes
     * @return a new launcher
     */
    public static StackLauncher on(String etcdUrl, String kafkaBootstrap, String topicPrefix) {
        StackLauncher launcher = new StackLauncher(topicPrefix);
        launcher.etcdUrl = etcdUrl;
        launcher.kafkaBootstrap = Objects.requireNonNull(kafkaBootstrap, "kafkaBootstrap");
        return launcher;
    }

    /**
     * Starts etcd, waits until it is healthy and makes it the tier's etcd.
     *
     * @param settings adjusts the builder (ports, work directory, timeouts); {@code b -> b} for defaults
     * @return the running server, stopped by {@link #close()}
     * @throws IllegalStateException as {@link EtcdServer#start()}
     */
    public synchronized EtcdServer startEtcd(UnaryOperator<EtcdServer.Builder> settings) {
        EtcdServer etcd = startServer(settings.apply(EtcdServer.builder()).build(), EtcdServer::start);
        etcdUrl = etcd.clientUrl();
        return etcd;
    }

    /**
     * Starts a single-node Kafka broker, waits until it is ready and makes it the tier's Kafka.
     *
     * @param settings adjusts the builder (ports, heap, work directory, class path); {@code b -> b} for defaults
     * @return the running broker, stopped by {@link #close()}
     * @throws IllegalStateException as {@link KafkaBroker#start()}
     */
    public synchronized KafkaBroker startKafka(UnaryOperator<KafkaBroker.Builder> settings) {
        KafkaBroker kafka = startServer(settings.apply(KafkaBroker.builder()).build(), KafkaBroker::start);
        kafkaBootstrap = kafka.bootstrapServers();
        return kafka;
    }

    /**
     * Starts a replicated Kafka cluster, waits until every broker is ready and makes it the tier's Kafka.
     *
     * @param settings adjusts the builder (size, ports, work directory, each broker's settings)
     * @return the running cluster, stopped by {@link #close()}
     * @throws IllegalStateException as {@link KafkaCluster#start()}
     */
    public synchronized KafkaCluster startKafkaCluster(UnaryOperator<KafkaCluster.Builder> settings) {
        KafkaCluster cluster =
                startServer(settings.apply(KafkaCluster.builder()).build(), KafkaCluster::start);
        kafkaBootstrap = cluster.bootstrapServers();
        return cluster;
    }

    /** Registers a server to stop at {@link #close()} before it starts, so that a failed start is stopped too. */
    private <S extends AutoCloseable> S startServer(S server, Consumer<S> start) {
        started.add(server);
        start.accept(server);
        return server;
    }

    /**
     * The tier's etcd.
     *
     * @return etcd's client URL
     * @throws IllegalStateException before etcd was started
     */
    public String etcdUrl() {
        return require(etcdUrl, "etcd");
    }

    /**
     * The tier's Kafka.
     *
     * @return its {@code bootstrap.servers}
     * @throws IllegalStateException before Kafka was started
     */
    public String kafkaBootstrap() {
        return require(kafkaBootstrap, "Kafka");
    }

    /**
     * The tier's topic prefix.
     *
     * @return the prefix its topics ({@code <prefix>.events}, {@code <prefix>.state}) are named by
     */
    public String topicPrefix() {
        return topicPrefix;
    }

    /**
     * An ingester of the tier, not started: {@code base} with the flags {@code --etcd-endpoints},
     * {@code --kafka-bootstrap}, {@code --topic-prefix}, {@code --http-host 127.0.0.1} and
     * {@code --http-port}. More flags may follow with {@link JavaProcess.Builder#args(String...)}.
     *
     * @param base the process: {@link JavaProcess#builderForJar} of the ingester jar, with its name, heap, log
     * @param httpPort the port of its {@code /readyz}, {@code /metrics}; 0 for any (then wait for its log)
     * @return {@code base}
     */
    public JavaProcess.Builder ingester(JavaProcess.Builder base, int httpPort) {
        return base.args(
                "--etcd-endpoints",
                etcdUrl(),
                "--kafka-bootstrap",
                kafkaBootstrap(),
                "--topic-prefix",
                topicPrefix,
                "--http-host",
                HOST,
                "--http-port",
                Integer.toString(httpPort));
    }

    /**
     * The tier's state materializer as a process of its own, not started: {@code base} (the
     * ingester jar) with {@code --no-publisher}, {@code --kafka-bootstrap}, {@code --topic-prefix},
     * {@code --http-host 127.0.0.1} and {@code --http-port}; no etcd flags, as it needs Kafka alone.
     *
     * @param base the process: {@link JavaProcess#builderForJar} of the ingester jar, with its name, heap, log
     * @param httpPort the port of its {@code /readyz}, {@code /metrics}; 0 for any (then wait for its log)
     * @return {@code base}
     */
    public JavaProcess.Builder materializer(JavaProcess.Builder base, int httpPort) {
        return base.args(
                "--no-publisher",
                "--kafka-bootstrap",
                kafkaBootstrap(),
                "--topic-prefix",
                topicPrefix,
                "--http-host",
                HOST,
                "--http-port",
                Integer.toString(httpPort));
    }

    /**
     * The JVM options a fan-out node runs with, as its image sets them
     * ({@code deploy/docker/fanout-node.Dockerfile}, {@code JAVA_TOOL_OPTIONS}; docs/DEPLOYMENT.md,
     * "JVM"):
     *
     * <ul>
     *   <li>{@code MaxTenuringThreshold=1}: what survives two young collections is old. Nearly
     *       everything a node keeps lives long (the cache, the history), and G1's default of up to
     *       15 copies between survivor spaces made a rebuild copy the growing cache again and
     *       again; a threshold of 0 promoted, at every collection, the objects of every response
     *       then in flight, which with 5,000 etcd API streams filled the old generation with
     *       garbage only a marking cycle reclaims (docs/BENCHMARKS.md, "G1's tenuring").
     *   <li>{@code GCTimeRatio=4}: G1 grows the heap when collections take more than a fifth of
     *       the time, not a thirteenth; a burst (5,000 watches attaching at once) had it grow the
     *       heap to ten times what the node keeps, and G1 gives that back only after a marking
     *       cycle.
     *   <li>{@code TrimNativeHeapInterval=5000}: the JVM returns the C heap's free memory to the
     *       system every 5 s, where glibc kept the transport buffers' freed chunks in RSS.
     * </ul>
     */
    public static final List<String> NODE_JVM_OPTIONS =
            List.of("-XX:MaxTenuringThreshold=1", "-XX:GCTimeRatio=4", "-XX:TrimNativeHeapInterval=5000");

    /**
     * A fan-out node of the tier that serves anyone, not started: {@code base} with the flags
     * {@code --kafka-bootstrap}, {@code --topic-prefix}, {@code --bind-address 127.0.0.1},
     * {@code --port}, {@code --node-id} and {@code --anonymous}. More flags (e.g.
     * {@code --etcd-api-port}) may follow.
     *
     * @param base the process: of the node's jar or its main class, with its name, heap, log
     * @param port the node's HTTP port
     * @param nodeId the node's id in its metrics and logs
     * @return {@code base}
     */
    public JavaProcess.Builder node(JavaProcess.Builder base, int port, String nodeId) {
        return node(base, port, nodeId, true);
    }

    /**
     * As {@link #node(JavaProcess.Builder, int, String)}; without {@code --anonymous} when
     * {@code anonymous} is false, for a node whose authentication flags follow.
     */
    public JavaProcess.Builder node(JavaProcess.Builder base, int port, String nodeId, boolean anonymous) {
        NODE_JVM_OPTIONS.forEach(base::jvmArg);
        base.args(
                "--kafka-bootstrap",
                kafkaBootstrap(),
                "--topic-prefix",
                topicPrefix,
                "--bind-address",
                HOST,
                "--port",
                Integer.toString(port),
                "--node-id",
                nodeId);
        return anonymous ? base.args("--anonymous") : base;
    }

    /**
     * Starts a process of the tier, stopped by {@link #close()}, and waits until
     * {@code http://127.0.0.1:<port>/readyz} answers 200.
     *
     * @param process an {@link #ingester} or a {@link #node}
     * @param what the process, for messages
     * @param port its HTTP port
     * @param timeout how long it may take to become ready
     * @return the running process
     * @throws IllegalStateException as {@link #awaitReady}
     */
    public JavaProcess startReady(JavaProcess.Builder process, String what, int port, Duration timeout) {
        JavaProcess p = start(process);
        awaitReady(p, what, "http://" + HOST + ":" + port + "/readyz", timeout, () -> {});
        return p;
    }

    /**
     * Starts a process of the tier, stopped by {@link #close()}, without waiting.
     *
     * @param process an {@link #ingester} or a {@link #node}
     * @return the started process
     */
    public synchronized JavaProcess start(JavaProcess.Builder process) {
        JavaProcess p = process.start();
        started.add(p);
        return p;
    }

    /**
     * The error of a process that refused its flags: the lines of its last launch (after
     * {@link ManagedProcess}'s {@code ==== testkit} line) before its usage text ({@code Usage:}),
     * which is what picocli prints, and never the usage itself, which says nothing of what was
     * wrong (e.g. {@code --cors-allowed-origins: '127.0.0.1:8000' (expected: ...)} from a
     * {@code WATCHFANOUT_*} variable).
     *
     * @return the message lines, or null when the log has none before a usage text (or cannot be read)
     */
    static String usageError(Path log) {
        try {
            if (!Files.isRegularFile(log) || Files.size(log) > MAX_USAGE_LOG_BYTES) {
                return null;
            }
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            int from = 0;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).startsWith("==== testkit ")) {
                    from = i + 1;
                }
            }
            List<String> message = new ArrayList<>();
            for (String line : lines.subList(from, lines.size())) {
                if (line.startsWith("Usage:")) {
                    return message.isEmpty() ? null : String.join("\n", message);
                }
                if (!line.isBlank()) {
                    message.add(line);
                }
            }
            return null;
        } catch (IOException | UncheckedIOException e) {
            return null;
        }
    }

    /**
     * Polls {@code readyz} every 200 ms until it answers 200.
     *
     * @param p the process that serves it
     * @param what the process, for messages
     * @param readyz the URL
     * @param timeout how long to wait
     * @param beforeEachPoll runs before every poll; may throw to give up (e.g. when the caller stops)
     * @throws FlagsRefusedException if the process exits with status 2 (it refused its flags),
     *     quoting its error line
     * @throws IllegalStateException if the process exits otherwise first, or is not ready in time,
     *     with the tail of its log; or if interrupted (the interrupt flag is set again)
     */
    public static void awaitReady(
            JavaProcess p, String what, String readyz, Duration timeout, Runnable beforeEachPoll) {
        awaitReady(p, what, readyz, timeout, beforeEachPoll, null);
    }

    /**
     * As {@link #awaitReady(JavaProcess, String, String, Duration, Runnable)}, over {@code https}
     * with {@code tls} (e.g. {@link TlsClientContext#of} trusting the process's CA), or plain
     * {@code http} when it is null.
     */
    public static void awaitReady(
            JavaProcess p, String what, String readyz, Duration timeout, Runnable beforeEachPoll, SSLContext tls) {
        HttpClient http = tls == null
                ? HTTP
                : HttpClient.newBuilder()
                        .sslContext(tls)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build();
        long deadline = System.nanoTime() + timeout.toNanos();
        HttpRequest request = HttpRequest.newBuilder(URI.create(readyz))
                .timeout(Duration.ofSeconds(2))
                .GET()
                .build();
        String lastAnswer = "no answer";
        while (true) {
            beforeEachPoll.run();
            if (!p.isAlive()) {
                boolean usage = p.exitCode().orElse(-1) == USAGE_EXIT_CODE;
                String refused = usage ? usageError(p.logFile()) : null;
                String message = what + " exited"
                        + p.exitCode().stream()
                                .mapToObj(c -> " with code " + c)
                                .findFirst()
                                .orElse("") + " while starting; "
                        + (refused != null
                                ? "it refused its flags (" + p.logFile() + "):\n" + refused
                                : "its log " + p.logFile() + " ends with:\n" + p.logTail(LOG_TAIL_LINES));
                throw usage ? new FlagsRefusedException(message) : new IllegalStateException(message);
            }
            try {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return;
                }
                lastAnswer =
                        "HTTP " + response.statusCode() + " " + response.body().trim();
            } catch (IOException e) {
                lastAnswer = e.toString();
            } catch (InterruptedException e) {
                throw ManagedProcess.interrupted("waiting for " + what, e);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + " not ready within " + timeout.toSeconds() + " s (last "
                        + readyz + " answer: " + lastAnswer + "); its log " + p.logFile() + " ends with:\n"
                        + p.logTail(LOG_TAIL_LINES));
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                throw ManagedProcess.interrupted("waiting for " + what, e);
            }
        }
    }

    /**
     * The samples of a Prometheus text-format page, such as a node's or the ingester's {@code /metrics}.
     *
     * @param url the page
     * @return sample name (with its labels, as printed) → value; lines that are no sample are skipped
     * @throws IOException if the page cannot be read
     * @throws InterruptedException if interrupted while reading it
     */
    public static Map<String, Double> metrics(String url) throws IOException, InterruptedException {
        String body = HTTP.send(
                        HttpRequest.newBuilder(URI.create(url))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        Map<String, Double> samples = new HashMap<>();
        for (String line : body.split("\n")) {
            int space = line.lastIndexOf(' ');
            if (line.isBlank() || line.startsWith("#") || space < 0) {
                continue;
            }
            try {
                samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            } catch (NumberFormatException e) {
                // not a sample
            }
        }
        return samples;
    }

    /**
     * The runnable jar of a module: {@code <repo>/<module>/target/<module>.jar}.
     *
     * @param repo the project's root directory
     * @param module {@code ingester} or {@code fanout-node}
     * @return the jar's path
     * @throws IllegalStateException if it is missing, saying how to build it
     */
    public static Path jar(Path repo, String module) {
        Path jar = repo.resolve(module)
                .resolve("target")
                .resolve(module + ".jar")
                .toAbsolutePath()
                .normalize();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing (expected: built by 'mvn -B -DskipTests package -pl "
                    + module + " -am' from " + repo.toAbsolutePath().normalize() + ")");
        }
        return jar;
    }

    /**
     * Stops every process this launcher started, the last started first (nodes before the
     * ingester, the ingester before Kafka and etcd). Goes on past a failing stop and throws the
     * first failure at the end. Idempotent.
     *
     * @throws IllegalStateException if a stop failed
     */
    @Override
    public synchronized void close() {
        RuntimeException first = null;
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                if (first == null) {
                    first = new IllegalStateException("stopping " + started.get(i) + " failed", e);
                }
            }
        }
        started.clear();
        if (first != null) {
            throw first;
        }
    }

    private static String require(String value, String what) {
        if (value == null) {
            throw new IllegalStateException(what + " of the stack was not started");
        }
        return value;
    }

    @Override
    public String toString() {
        return "StackLauncher{etcd=" + etcdUrl + ", kafka=" + kafkaBootstrap + ", topicPrefix=" + topicPrefix + "}";
    }
}
