package io.watchfanout.localstack;

import io.watchfanout.localstack.demo.DemoLoad;
import io.watchfanout.testkit.ChildProcesses;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.HaproxyServer;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaCluster;
import io.watchfanout.testkit.StackLauncher;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the parts of a local stack in order — etcd, the Kafka broker(s), the ingester, the
 * Kubernetes topics application, the fan-out nodes — waits until each is ready, prints a short status, and stops them in the reverse order
 * (fan-out nodes, Kubernetes topics, ingester, Kafka, etcd) on JVM shutdown, then removes a temporary data
 * directory.
 *
 * <p>Shutdown runs inside the testkit's child reaper ({@link ChildProcesses#runBeforeReaping}),
 * which afterwards kills with SIGKILL anything still alive. Children run in sessions of their
 * own ({@link ChildProcesses#startInOwnSession}), so that Ctrl-C — SIGINT to the terminal's
 * foreground process group — reaches only this JVM and the parts stop in order, not all at once.
 * Each child also runs behind the testkit's watchdog ({@link ChildProcesses#stopWhenThisJvmDies}):
 * when this JVM dies without a shutdown (SIGKILL, the OOM killer), every part gets SIGTERM at
 * once, and SIGKILL {@value #ORPHAN_GRACE_SECONDS} s later, instead of running on, orphaned,
 * holding its ports.
 *
 * <p>Threads: {@link #run()} on the main thread starts the stack and then waits; {@link #stop()}
 * runs on the shutdown hook's thread (or the main thread after a failed start); a daemon thread
 * reports parts that exit unexpectedly. The list of parts is thread-safe; a part is added to it
 * before it starts, so that a stop during the start finds it.
 */
final class LocalStack {
    /** System property naming the launcher's own log file (read by logback.xml). */
    static final String LOG_FILE_PROPERTY = "watchfanout.localstack.log";

    private static final Logger LOG = LoggerFactory.getLogger(LocalStack.class);
    private static final Duration FANOUT_STOP_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration INGESTER_STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STARTUP_ABORT_WAIT = Duration.ofSeconds(30);
    /** How long an orphaned part gets between SIGTERM and SIGKILL: about the longest ordered stop. */
    static final int ORPHAN_GRACE_SECONDS = 30;

    /**
     * With {@code --demo}, etcd keeps this much history and compacts the rest, as kube-apiserver
     * has a cluster's etcd compacted every 5 minutes: the demo's writes would otherwise pile up
     * as revisions for ever (the ingester resyncs when its resume point is compacted). Without
     * the demo, etcd keeps its whole history (tests and examples read it back).
     */
    static final String DEMO_ETCD_COMPACTION_RETENTION = "5m";

    private static final String INGESTER_HEAP = "384m";
    private static final String FANOUT_HEAP = "512m";
    private static final String KUBE_TOPICS_HEAP = "384m";
    private static final Duration KUBE_TOPICS_STOP_TIMEOUT = Duration.ofSeconds(30);

    private final StackConfig config;
    private final StackDirectory dir;
    private final String brokerClasspath;
    private final PrintStream out;
    /** Gives the ingester and the nodes their flags; etcd and Kafka are the stack's own parts. */
    private volatile StackLauncher tier;
    /** TLS, credentials and the policy of {@code --secure}; null without it. */
    private final SecureStack secure;

    private volatile EtcdServer etcdServer;
    /** HAProxy in front of the nodes; null until started, and when haproxy is not installed. */
    private volatile HaproxyServer balancer;

    private final List<Part> parts = new CopyOnWriteArrayList<>();
    private final Set<Part> reportedExits = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final CountDownLatch startupEnded = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile Thread starter;
    private volatile DemoLoad demo;
    private volatile boolean startFailed;

    /**
     * @param config the validated settings
     * @param dir the data directory, already created
     * @param brokerClasspath the class path of the Kafka broker JVM (holds kafka_2.13)
     * @param out where the short status goes (the terminal)
     */
    LocalStack(StackConfig config, StackDirectory dir, String brokerClasspath, PrintStream out) {
        this.config = Objects.requireNonNull(config, "config");
        this.dir = Objects.requireNonNull(dir, "dir");
        this.brokerClasspath = Objects.requireNonNull(brokerClasspath, "brokerClasspath");
        this.out = Objects.requireNonNull(out, "out");
        this.tier = StackLauncher.on(config.etcdUrl(), config.kafkaBootstrap(), config.topicPrefix());
        this.secure = config.secure() ? SecureStack.create(dir.root()) : null;
    }

    /**
     * Starts the stack, prints its status and blocks until JVM shutdown has stopped it.
     *
     * @return 2 if a part refused its flags while starting (a bad {@code WATCHFANOUT_*} value; a
     *     temporary data directory is removed as at any stop), 1 if the stack could not start
     *     otherwise (after stopping what did start; the data and logs are kept); otherwise it
     *     returns only once a shutdown stopped the stack
     */
    int run() {
        ChildProcesses.startInOwnSession(true);
        ChildProcesses.stopWhenThisJvmDies(true, ORPHAN_GRACE_SECONDS);
        ChildProcesses.runBeforeReaping(this::stop);
        starter = Thread.currentThread();
        long startNanos = System.nanoTime();
        try {
            out.println("watch-fanout local stack: data and logs in " + dir.root()
                    + (dir.temporary() ? " (removed at exit; keep them with --data-dir DIR)" : ""));
            start();
        } catch (io.watchfanout.testkit.FlagsRefusedException e) {
            // The user's input was wrong, not the machine: a usage error, and nothing worth keeping.
            startupEnded.countDown();
            if (stopping.get()) {
                awaitStopped();
                return 130;
            }
            out.println();
            out.println("local stack refused to start: " + e.getMessage());
            LOG.info("local stack refused to start: {}", e.getMessage());
            stop();
            return 2;
        } catch (RuntimeException | LinkageError e) {
            startupEnded.countDown();
            if (stopping.get()) {
                awaitStopped();
                return 130;
            }
            out.println();
            out.println("local stack failed to start: " + e.getMessage());
            LOG.info("local stack failed to start", e); // the terminal has the message; the trace goes to the log
            startFailed = true;
            stop();
            return 1;
        } finally {
            startupEnded.countDown();
        }
        if (stopping.get()) { // a signal right after the start
            awaitStopped();
            return 130;
        }
        printStatus(Duration.ofNanos(System.nanoTime() - startNanos));
        Thread monitor = new Thread(this::monitor, "local-stack-monitor");
        monitor.setDaemon(true);
        monitor.start();
        if (config.demo()) {
            startDemo();
        }
        awaitStopped();
        return 0;
    }

    private void awaitStopped() {
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- start -------------------------------------------------------------------------

    private void start() {
        LOG.info("starting local stack: {}", config);
        checkPortsFree();
        startEtcd();
        startKafka();
        startIngester();
        if (config.kubeTopics()) {
            startKubeTopics();
        }
        startFanoutNodes();
        startBalancer();
    }

    /** Fails before anything starts if a port is taken, naming the flag that changes it. */
    private void checkPortsFree() {
        // What each port is for, and the flag that moves it; a list, as several ports share a flag.
        List<Map.Entry<String, Integer>> ports = new ArrayList<>();
        ports.add(Map.entry("etcd client port (--etcd-port)", config.etcdPort()));
        ports.add(Map.entry("etcd peer port (--etcd-peer-port)", config.etcdPeerPort()));
        for (int i = 0; i < config.kafkaBrokers(); i++) {
            String broker = config.kafkaBrokers() == 1 ? "" : " of broker " + (i + 1);
            ports.add(Map.entry(
                    "Kafka port" + broker + " (--kafka-port)",
                    config.kafkaPorts().get(i)));
            ports.add(Map.entry(
                    "Kafka controller port" + broker + " (--kafka-controller-port)",
                    config.kafkaControllerPorts().get(i)));
        }
        ports.add(Map.entry("ingester port (--ingester-port)", config.ingesterPort()));
        if (config.kubeTopics()) {
            ports.add(Map.entry("kube-topics port (--kube-topics-port)", config.kubeTopicsPort()));
        }
        for (int port : config.fanoutPorts()) {
            ports.add(Map.entry("fan-out node port (--fanout-ports)", port));
        }
        for (int port : config.fanoutEtcdPorts()) {
            ports.add(Map.entry("fan-out node etcd API port (--fanout-etcd-ports)", port));
        }
        if (HaproxyServer.executable().isPresent()) {
            ports.add(Map.entry("load balancer port (--balancer-port)", config.balancerPort()));
            ports.add(Map.entry("load balancer etcd API port (--balancer-etcd-port)", config.balancerEtcdPort()));
        }
        List<String> taken = new ArrayList<>();
        for (Map.Entry<String, Integer> port : ports) {
            if (!isFree(port.getValue())) {
                taken.add(port.getKey() + " " + port.getValue());
            }
        }
        if (!taken.isEmpty()) {
            boolean etcdPorts = taken.stream().anyMatch(t -> t.startsWith("etcd"));
            throw new IllegalStateException("already in use on 127.0.0.1: " + String.join(", ", taken)
                    + " (expected: free ports). Is another local stack running? Stop it, or choose other ports with the"
                    + " flags named above."
                    + (etcdPorts
                            ? " Debian's etcd-server package also starts an etcd service on"
                                    + " 2379/2380: 'sudo systemctl disable --now etcd' stops it."
                            : ""));
        }
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true); // as the servers do: a connection in TIME_WAIT does not block them
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private void startEtcd() {
        EtcdServer.Builder etcdBuilder = EtcdServer.builder()
                .clientPort(config.etcdPort())
                .peerPort(config.etcdPeerPort())
                .workDir(dir.part("etcd"))
                .keepData(true) // a temporary directory goes as a whole at the end
                .progressNotifyInterval(EtcdServer.DEFAULT_PROGRESS_NOTIFY_INTERVAL)
                .startTimeout(config.startTimeout())
                .stopTimeout(Duration.ofSeconds(15));
        if (config.demo()) {
            etcdBuilder
                    .extraArg("--auto-compaction-mode=periodic")
                    .extraArg("--auto-compaction-retention=" + DEMO_ETCD_COMPACTION_RETENTION);
        }
        EtcdServer etcd = (secure == null ? etcdBuilder : secure.etcd(etcdBuilder)).build();
        Part part = new Part(
                "etcd", etcd.clientUrl(), etcd::pid, etcd::isAlive, etcd::exitCode, etcd.logFile(), etcd::close);
        step(part, etcd::start);
        etcdServer = etcd;
        if (secure != null) {
            secure.etcdStarted(etcd);
        }
    }

    private void startKafka() {
        if (config.kafkaBrokers() > 1) {
            startKafkaCluster();
            return;
        }
        Path kafkaDir = dir.part("kafka");
        KafkaBroker.Builder builder = KafkaBroker.builder()
                .brokerPort(config.kafkaPort())
                .controllerPort(config.kafkaControllerPort())
                .workDir(kafkaDir)
                .classpath(brokerClasspath)
                .keepData(true)
                .startTimeout(config.startTimeout())
                .stopTimeout(Duration.ofSeconds(30));
        formattedClusterId(kafkaDir.resolve("data")).ifPresent(builder::clusterId);
        KafkaBroker kafka = (secure == null ? builder : secure.kafka(builder)).build();
        Part part = new Part(
                "kafka",
                secure == null ? kafka.bootstrapServers() : kafka.saslSslBootstrapServers() + " (SASL_SSL)",
                kafka::pid,
                kafka::isAlive,
                kafka::exitCode,
                kafka.logFile(),
                kafka::close);
        step(part, kafka::start);
        if (secure != null) {
            secure.kafkaStarted(kafka);
            // The tier's clients use the SASL_SSL listener; the PLAINTEXT one is the broker's own.
            tier = StackLauncher.on(config.etcdUrl(), kafka.saslSslBootstrapServers(), config.topicPrefix());
        }
    }

    /**
     * Several brokers, each also a controller, in {@code kafka-1/}, {@code kafka-2/}, ...: one
     * line in the status table each, and one stop for all of them (the first broker part to stop
     * stops the cluster, the others find their broker stopped), because brokers stopped one after
     * the other would leave the last ones without a controller majority to shut down cleanly.
     *
     * <p>Without controlled shutdown: a broker in controlled shutdown waits for the controllers'
     * quorum to approve it, and when all stop at once the first ones are gone (and their
     * controllers with them) within a second, so the last one waited for a quorum that no longer
     * was, until SIGKILL cut it down mid-write with its data kept. The whole cluster stops, so there
     * are no leaders to move first; each broker still closes its logs cleanly.
     */
    private void startKafkaCluster() {
        KafkaCluster.Builder builder = KafkaCluster.builder()
                .size(config.kafkaBrokers())
                .brokerPorts(config.kafkaPorts())
                .controllerPorts(config.kafkaControllerPorts())
                .workDir(dir.root())
                .configure(b -> b.classpath(brokerClasspath)
                        .brokerProperty("controlled.shutdown.enable", "false")
                        .keepData(true)
                        .startTimeout(config.startTimeout())
                        .stopTimeout(Duration.ofSeconds(30)));
        formattedClusterId(dir.part("kafka-1").resolve("data")).ifPresent(builder::clusterId);
        KafkaCluster cluster = builder.build();
        for (KafkaBroker broker : cluster.brokers()) {
            parts.add(new Part(
                    "kafka-" + broker.nodeId(),
                    broker.bootstrapServers(),
                    broker::pid,
                    broker::isAlive,
                    broker::exitCode,
                    broker.logFile(),
                    cluster::close));
        }
        checkNotStopping();
        out.print(String.format(
                Locale.ROOT,
                "  %-12s starting %d brokers on %s ... ",
                "kafka",
                config.kafkaBrokers(),
                config.kafkaBootstrap()));
        out.flush();
        long startNanos = System.nanoTime();
        cluster.start();
        out.println(String.format(Locale.ROOT, "ready in %.1f s", (System.nanoTime() - startNanos) / 1e9));
    }

    /** The cluster id of a storage formatted by an earlier run on the same data directory. */
    private static Optional<String> formattedClusterId(Path logDir) {
        Path meta = logDir.resolve("meta.properties");
        if (!Files.isRegularFile(meta)) {
            return Optional.empty();
        }
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(meta)) {
            props.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + meta, e);
        }
        return Optional.ofNullable(props.getProperty("cluster.id"));
    }

    private void startIngester() {
        JavaProcess.Builder builder =
                tier.ingester(javaPart("ingester", config.ingesterJar(), INGESTER_HEAP), config.ingesterPort());
        if (config.kafkaBrokers() > 1) {
            // What production runs: every write on two brokers before it counts (the ingester and
            // the materializer write with acks=all), and no start on topics replicated less.
            builder.args(
                    "--replication-factor",
                    Integer.toString(config.kafkaReplicationFactor()),
                    "--min-insync-replicas",
                    Integer.toString(config.kafkaMinInsyncReplicas()));
        }
        if (secure != null) {
            builder.args(secure.ingesterFlags());
        }
        String url = config.httpScheme() + "://127.0.0.1:" + config.ingesterPort();
        AtomicReference<JavaProcess> process = new AtomicReference<>();
        Part part = javaProcessPart("ingester", url, process, INGESTER_STOP_TIMEOUT, logFile("ingester"));
        step(part, () -> {
            process.set(builder.start());
            awaitReady(part, process.get(), url + "/readyz");
        });
    }

    /**
     * The Kubernetes topics application, once the ingester has made the events topic it reads:
     * the topics' partitions and replication follow the stack's brokers. Its {@code /readyz} is
     * plain HTTP even with {@code --secure} (it has no TLS of its own; Kafka is SASL_SSL).
     */
    private void startKubeTopics() {
        JavaProcess.Builder builder = javaPart("kube-topics", config.kubeTopicsJar(), KUBE_TOPICS_HEAP)
                .args(
                        "--kafka-bootstrap",
                        tier.kafkaBootstrap(),
                        "--topic-prefix",
                        tier.topicPrefix(),
                        "--replication-factor",
                        Integer.toString(config.kafkaReplicationFactor()),
                        "--http-host",
                        StackLauncher.HOST,
                        "--http-port",
                        Integer.toString(config.kubeTopicsPort()));
        if (secure != null) {
            builder.args(secure.kubeTopicsFlags());
        }
        String url = "http://127.0.0.1:" + config.kubeTopicsPort();
        AtomicReference<JavaProcess> process = new AtomicReference<>();
        Part part = javaProcessPart("kube-topics", url, process, KUBE_TOPICS_STOP_TIMEOUT, logFile("kube-topics"));
        step(part, () -> {
            process.set(builder.start());
            StackLauncher.awaitReady(
                    process.get(),
                    part.name() + " at " + part.address(),
                    url + "/readyz",
                    config.startTimeout(),
                    this::checkNotStopping);
        });
    }

    private void startFanoutNodes() {
        List<Part> nodes = new ArrayList<>();
        List<AtomicReference<JavaProcess>> processes = new ArrayList<>();
        List<String> urls = new ArrayList<>();
        long startNanos = System.nanoTime();
        for (int n = 0; n < config.fanoutPorts().size(); n++) {
            int port = config.fanoutPorts().get(n);
            String name = "fanout-" + port;
            String url = config.httpScheme() + "://127.0.0.1:" + port;
            AtomicReference<JavaProcess> process = new AtomicReference<>();
            Part part = javaProcessPart("fanout-node", url, process, FANOUT_STOP_TIMEOUT, logFile(name));
            parts.add(part);
            checkNotStopping();
            JavaProcess.Builder node = tier.node(
                            javaPart(name, config.fanoutNodeJar(), FANOUT_HEAP), port, name, secure == null)
                    .args(
                            "--etcd-api-port",
                            Integer.toString(config.fanoutEtcdPorts().get(n)),
                            "--etcd-endpoints",
                            config.etcdUrl());
            if (secure != null) {
                node.args(secure.nodeFlags());
            }
            process.set(node.start());
            nodes.add(part);
            processes.add(process);
            urls.add(url);
        }
        out.print(String.format(Locale.ROOT, "  %-12s starting on %s ... ", "fanout-node", String.join(" and ", urls)));
        out.flush();
        for (int i = 0; i < nodes.size(); i++) {
            awaitReady(nodes.get(i), processes.get(i).get(), urls.get(i) + "/readyz");
        }
        out.println(String.format(Locale.ROOT, "ready in %.1f s", (System.nanoTime() - startNanos) / 1e9));
    }

    /**
     * HAProxy in front of every node's HTTP and etcd API port, when installed: one address that
     * outlives any one node. Without it the stack runs on, and the status says what to install.
     */
    private void startBalancer() {
        if (HaproxyServer.executable().isEmpty()) {
            return;
        }
        HaproxyServer.Builder builder = HaproxyServer.builder()
                .httpPort(config.balancerPort())
                .etcdApiPort(config.balancerEtcdPort())
                .tls(secure != null)
                .workDir(dir.part("haproxy"))
                .keepData(true)
                .startTimeout(config.startTimeout());
        for (int i = 0; i < config.fanoutPorts().size(); i++) {
            builder.node(config.fanoutPorts().get(i), config.fanoutEtcdPorts().get(i));
        }
        HaproxyServer haproxy = builder.build();
        Part part = new Part(
                "balancer",
                haproxy.httpUrl(),
                haproxy::pid,
                haproxy::isAlive,
                haproxy::exitCode,
                haproxy.logFile(),
                haproxy::close);
        step(part, haproxy::start);
        balancer = haproxy;
    }

    /** A child JVM of the stack, its log and temporary files under the part's directory. */
    private JavaProcess.Builder javaPart(String name, Path jar, String heap) {
        Path partDir = dir.part(name);
        Path tmp = partDir.resolve("tmp"); // scratch space of one run (the materializer's Kafka Streams state)
        try {
            io.watchfanout.testkit.WorkDirs.deleteRecursively(tmp);
            Files.createDirectories(tmp);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + tmp, e);
        }
        return JavaProcess.builderForJar(jar)
                .name(name)
                .maxHeap(heap)
                .logFile(logFile(name))
                .workingDirectory(partDir)
                .systemProperty("java.io.tmpdir", tmp.toString());
    }

    /** The log file of a child JVM: {@code <part dir>/ingester.log}, {@code fanout-PORT/fanout-node.log}. */
    private Path logFile(String partName) {
        return dir.part(partName).resolve(partName.startsWith("fanout-") ? "fanout-node.log" : partName + ".log");
    }

    /** The part of a child JVM that {@code holder} will hold once started. */
    private static Part javaProcessPart(
            String name, String url, AtomicReference<JavaProcess> holder, Duration stopTimeout, Path log) {
        return new Part(
                name,
                url,
                () -> {
                    JavaProcess p = holder.get();
                    if (p == null) {
                        throw new IllegalStateException(name + " was never started");
                    }
                    return p.pid();
                },
                () -> holder.get() != null && holder.get().isAlive(),
                () -> holder.get() != null ? holder.get().exitCode() : OptionalInt.empty(),
                log,
                () -> {
                    JavaProcess p = holder.get();
                    if (p != null) {
                        p.stop(stopTimeout);
                    }
                });
    }

    /** Registers {@code part} (so that a stop finds it), starts it and prints how long it took. */
    private void step(Part part, Runnable startAndAwait) {
        parts.add(part);
        checkNotStopping();
        out.print(String.format(Locale.ROOT, "  %-12s starting on %s ... ", part.name(), part.address()));
        out.flush();
        long startNanos = System.nanoTime();
        startAndAwait.run();
        out.println(String.format(Locale.ROOT, "ready in %.1f s", (System.nanoTime() - startNanos) / 1e9));
    }

    private void checkNotStopping() {
        if (stopping.get()) {
            throw new IllegalStateException("stopping");
        }
    }

    /** Waits until {@code readyz} answers 200; fails early if the process exits or the stack stops. */
    private void awaitReady(Part part, JavaProcess process, String readyz) {
        StackLauncher.awaitReady(
                process,
                part.name() + " at " + part.address(),
                readyz,
                config.startTimeout(),
                this::checkNotStopping,
                secure == null ? null : secure.probes());
    }

    // ---- running -----------------------------------------------------------------------

    private void printStatus(Duration took) {
        HaproxyServer lb = balancer;
        // Where clients go: the balancer, which outlives any one node, else the first node.
        String firstNode = lb != null
                ? lb.httpUrl()
                : config.httpScheme() + "://127.0.0.1:" + config.fanoutPorts().get(0);
        StringBuilder s = new StringBuilder();
        s.append(
                String.format(Locale.ROOT, "%nwatch-fanout local stack is ready (%.1f s)%n", took.toMillis() / 1000.0));
        if (lb != null) {
            s.append(String.format(
                    Locale.ROOT,
                    "One address for every fan-out node (HAProxy; a node that fails /readyz is taken out):%n"
                            + "  %s (HTTP, Kubernetes API) and %s (etcd API)%n",
                    lb.httpUrl(),
                    lb.etcdApiEndpoint()));
        } else {
            s.append(String.format(
                    Locale.ROOT,
                    "No load balancer: haproxy is not installed (apt-get install %s); each fan-out node has its own"
                            + " address below, and a client of one node must be moved by hand when it stops.%n",
                    HaproxyServer.DEBIAN_PACKAGE));
        }
        for (Part part : parts) {
            s.append(String.format(
                    Locale.ROOT,
                    "  %-12s %-24s pid %-8d log %s%n",
                    part.name(),
                    part.address(),
                    part.pidOrMinusOne(),
                    part.log()));
        }
        // Each node's etcd API port beside its HTTP port: the two lists pair up by position.
        List<String> etcdApis = new ArrayList<>();
        for (int i = 0; i < config.fanoutEtcdPorts().size(); i++) {
            etcdApis.add("127.0.0.1:" + config.fanoutEtcdPorts().get(i) + " (node "
                    + config.fanoutPorts().get(i) + ")");
        }
        s.append(String.format(Locale.ROOT, "  %-12s %s%n", "etcd API", String.join(" and ", etcdApis)));
        s.append(String.format(
                Locale.ROOT,
                "  %-12s %s.events, %s.state%s%s%n",
                "topics",
                config.topicPrefix(),
                config.topicPrefix(),
                config.kubeTopics()
                        ? String.format(
                                Locale.ROOT,
                                ", %1$s.k8s.<resource>, %1$s.k8s-latest.<resource>, %1$s.k8s-errors",
                                config.topicPrefix())
                        : "",
                config.kafkaBrokers() == 1
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                " (replication factor %d, min.insync.replicas %d)",
                                config.kafkaReplicationFactor(),
                                config.kafkaMinInsyncReplicas())));
        if (secure == null) {
            usage(s, firstNode);
        } else {
            secureUsage(s, firstNode);
        }
        s.append(String.format(Locale.ROOT, "%nPress Ctrl-C to stop everything.%n"));
        out.print(s);
        out.flush();
        LOG.info("local stack ready:{}{}", System.lineSeparator(), s);
    }

    /** The lines that show a plain stack at work. */
    private void usage(StringBuilder s, String firstNode) {
        s.append(String.format(
                Locale.ROOT,
                "%nWatch every key under /registry/ through %s:%n",
                balancer != null ? "the balancer" : "a fan-out node"));
        s.append(String.format(
                Locale.ROOT,
                "  curl -N '%s/v1/watch?key=/registry/&prefix=true&allowWatchBookmarks=true'%n",
                firstNode));
        s.append(String.format(
                Locale.ROOT,
                "and write to etcd in another terminal%s:%n",
                onPath("etcdctl") ? "" : " (etcdctl is in the Debian package etcd-client)"));
        s.append(String.format(Locale.ROOT, "  etcdctl --endpoints=%s put /registry/demo hello%n", config.etcdUrl()));
        s.append(String.format(Locale.ROOT, "List what the fan-out nodes hold:%n"));
        s.append(String.format(Locale.ROOT, "  curl '%s/v1/kv?key=/registry/&prefix=true&limit=10'%n", firstNode));
        String etcdApi = balancer != null
                ? balancer.etcdApiEndpoint()
                : config.fanoutEtcdPorts().stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
        s.append(String.format(
                Locale.ROOT,
                "Every fan-out node is also an etcd endpoint (watches and reads from its cache,"
                        + " the rest forwarded to etcd):%n"));
        s.append(String.format(Locale.ROOT, "  etcdctl --endpoints=%s watch --prefix /registry/%n", etcdApi));
        s.append(String.format(Locale.ROOT, "  etcdctl --endpoints=%s get --prefix /registry/ --keys-only%n", etcdApi));
        if (config.kubeTopics()) {
            kubeTopicsUsage(s);
        }
    }

    /** Where the Kubernetes topics application answers, and a read of one of its topics. */
    private void kubeTopicsUsage(StringBuilder s) {
        String ops = "http://127.0.0.1:" + config.kubeTopicsPort();
        s.append(String.format(
                Locale.ROOT,
                "Kubernetes objects as watch events on Kafka, a topic per resource (kube-topics: %s/readyz,"
                        + " %s/metrics)%s:%n",
                ops,
                ops,
                onPath("kcat") ? "" : "; kcat is in the Debian package kcat"));
        s.append(String.format(
                Locale.ROOT,
                "  kcat -C -b %s -t %s.k8s.pods -o beginning -e -f '%%k %%s\\n'%n",
                config.kafkaBootstrap(),
                config.topicPrefix()));
    }

    /**
     * The lines that show a secured stack at work: a watch and lists that are allowed (token,
     * client certificate, etcd user) and one that is refused.
     */
    private void secureUsage(StringBuilder s, String firstNode) {
        String ca = secure.caCert().toString();
        String alice = "'Authorization: Bearer " + secure.token(SecureStack.ALICE) + "'";
        String etcdApi = balancer != null
                ? "https://" + balancer.etcdApiEndpoint()
                : config.fanoutEtcdPorts().stream()
                        .map(p -> "https://127.0.0.1:" + p)
                        .collect(Collectors.joining(","));
        s.append(String.format(
                Locale.ROOT,
                "%nEverything speaks TLS and asks who is calling (docs/SECURITY.md); the CA, certificates, tokens and"
                        + " policy are in %s.%n",
                secure.dir()));
        s.append(String.format(
                Locale.ROOT, "Watch config maps through a fan-out node as alice (a bearer token of tokens.csv):%n"));
        s.append(String.format(
                Locale.ROOT,
                "  curl -N --cacert %s -H %s '%s/v1/watch?key=/registry/configmaps/&prefix=true&allowWatchBookmarks=true'%n",
                ca,
                alice,
                firstNode));
        s.append(String.format(Locale.ROOT, "and write to etcd in another terminal, as etcd's root:%n"));
        s.append(String.format(
                Locale.ROOT,
                "  etcdctl --endpoints=%s --cacert=%s --cert=%s --key=%s --user=root:$(cat %s) put"
                        + " /registry/configmaps/demo hello%n",
                config.etcdUrl(),
                ca,
                secure.etcdClientCert().cert(),
                secure.etcdClientCert().key(),
                secure.etcdPasswordFile("root")));
        s.append(String.format(
                Locale.ROOT, "List them through a node's etcd API as alice, by her client certificate:%n"));
        s.append(String.format(
                Locale.ROOT,
                "  etcdctl --endpoints=%s --cacert=%s --cert=%s --key=%s get --prefix /registry/configmaps/"
                        + " --keys-only%n",
                etcdApi,
                ca,
                secure.aliceCert().cert(),
                secure.aliceCert().key()));
        s.append(String.format(Locale.ROOT, "or as the etcd user alice:%n"));
        s.append(String.format(
                Locale.ROOT,
                "  etcdctl --endpoints=%s --cacert=%s --user=alice:$(cat %s) get --prefix /registry/configmaps/"
                        + " --keys-only%n",
                etcdApi,
                ca,
                secure.etcdPasswordFile(SecureStack.ALICE)));
        s.append(String.format(
                Locale.ROOT,
                "Refused with 403 Forbidden (alice may watch and read only %s):%n",
                String.join(" and ", SecureStack.ALICE_PREFIXES)));
        s.append(String.format(
                Locale.ROOT,
                "  curl --cacert %s -H %s '%s/v1/kv?key=/registry/secrets/&prefix=true'%n",
                ca,
                alice,
                firstNode));
        s.append(String.format(
                Locale.ROOT,
                "The token of admin, who may do everything, is in %s.%n",
                secure.dir().resolve("tokens.csv")));
    }

    private static boolean onPath(String program) {
        String path = Objects.requireNonNullElse(System.getenv("PATH"), "");
        for (String d : path.split(File.pathSeparator)) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    private void startDemo() {
        try {
            demo = secure == null
                    ? DemoLoad.start(config.etcdUrl(), config.demoRate())
                    : DemoLoad.start(
                            etcdServer
                                    .clientBuilder()
                                    .user(io.etcd.jetcd.ByteSequence.from("root", StandardCharsets.UTF_8))
                                    .password(io.etcd.jetcd.ByteSequence.from(
                                            secure.etcdRootPassword(), StandardCharsets.UTF_8))
                                    .build(),
                            config.etcdUrl(),
                            config.demoRate());
            out.println(String.format(
                    Locale.ROOT,
                    "Demo load: %d writes/s of Kubernetes objects under /registry/, encoded as kube-apiserver"
                            + " stores them (pods, deployments, config maps, nodes, leases and events; a CRD and its"
                            + " backups), with transactions and expiring leases; the curl above shows them.",
                    config.demoRate()));
            if (secure == null) {
                HaproxyServer lb = balancer;
                String server = lb != null
                        ? lb.httpUrl()
                        : config.httpScheme() + "://127.0.0.1:"
                                + config.fanoutPorts().get(0);
                out.println(String.format(
                        Locale.ROOT,
                        "Follow them with kubectl through the fan-out nodes' Kubernetes API:%n"
                                + "  kubectl --server %s get pods -A -w%n"
                                + "  kubectl --server %s get backups -A",
                        server,
                        server));
            }
        } catch (RuntimeException e) {
            out.println("demo load could not start: " + e.getMessage());
            LOG.error("demo load could not start", e);
        }
        out.flush();
    }

    /** Reports, once each, parts that exit while the stack runs (the others keep running). */
    private void monitor() {
        while (!stopping.get()) {
            for (Part part : parts) {
                if (!stopping.get() && !part.alive().getAsBoolean() && reportedExits.add(part)) {
                    String code = part.exitCode().get().stream()
                            .mapToObj(c -> " with code " + c)
                            .findFirst()
                            .orElse("");
                    String message = String.format(
                            Locale.ROOT,
                            "! %s %s (pid %d) exited%s; see %s. The other parts keep" + " running; Ctrl-C stops them.",
                            part.name(),
                            part.address(),
                            part.pidOrMinusOne(),
                            code,
                            part.log());
                    out.println(message);
                    out.flush();
                    LOG.info(message); // printed above: not again on the terminal as a warning
                }
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    // ---- stop --------------------------------------------------------------------------

    /**
     * Stops every part in reverse order and removes a temporary data directory. Idempotent and
     * thread-safe: a second call waits for the first. A stop during the start interrupts it.
     */
    void stop() {
        if (!stopping.compareAndSet(false, true)) {
            awaitStopped();
            return;
        }
        try {
            Thread startThread = starter;
            if (startThread != null && startThread != Thread.currentThread() && startupEnded.getCount() > 0) {
                startThread.interrupt();
                if (!startupEnded.await(STARTUP_ABORT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn(
                            "the start did not end within {} s of the interrupt; stopping anyway",
                            STARTUP_ABORT_WAIT.toSeconds());
                }
            }
            if (parts.isEmpty()) { // nothing started (bad ports): nothing to stop, nothing worth keeping
                dir.removeIfTemporary();
                return;
            }
            long startNanos = System.nanoTime();
            out.println();
            out.println("stopping the local stack ...");
            out.flush();
            DemoLoad load = demo;
            if (load != null) {
                load.close();
            }
            List<Part> started = new ArrayList<>(parts);
            List<Thread> nodeStops = new ArrayList<>();
            for (Part part : started) {
                if (part.name().equals("fanout-node")) {
                    Thread t = new Thread(() -> stopPart(part), "stop-" + part.address());
                    t.start();
                    nodeStops.add(t);
                }
            }
            for (Thread t : nodeStops) {
                t.join();
            }
            for (int i = started.size() - 1; i >= 0; i--) {
                if (!started.get(i).name().equals("fanout-node")) {
                    stopPart(started.get(i));
                }
            }
            boolean remove = dir.temporary() && !startFailed;
            if (remove) {
                dir.removeIfTemporary();
            }
            out.println(String.format(
                    Locale.ROOT,
                    "stopped in %.1f s%s",
                    (System.nanoTime() - startNanos) / 1e9,
                    remove ? "; removed " + dir.root() : "; data and logs kept in " + dir.root()));
            out.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("stopping the local stack failed", e);
            out.println("stopping the local stack failed: " + e);
        } finally {
            stopped.countDown();
        }
    }

    private void stopPart(Part part) {
        long pid = part.pidOrMinusOne();
        try {
            long startNanos = System.nanoTime();
            part.stop().run();
            String line = String.format(
                    Locale.ROOT,
                    "  %-12s %-24s stopped (%.1f s)",
                    part.name(),
                    part.address(),
                    (System.nanoTime() - startNanos) / 1e9);
            out.println(line);
            out.flush();
            LOG.info("{} (pid {}): {}", part.name(), pid, line.trim());
        } catch (RuntimeException e) {
            LOG.error("stopping {} (pid {}) failed", part.name(), pid, e);
            out.println("  " + part.name() + " " + part.address() + ": stop failed: " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "LocalStack{" + dir.root() + ", parts=" + parts.size() + "}";
    }
}
