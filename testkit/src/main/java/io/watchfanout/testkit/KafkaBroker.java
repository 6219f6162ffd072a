package io.watchfanout.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node Kafka (KRaft, {@code process.roles=broker,controller}) running as a child
 * JVM: {@code java -cp <classpath> kafka.Kafka server.properties}, after formatting its storage
 * once with {@code kafka.tools.StorageTool format -t <clusterId> -c server.properties} (static
 * quorum: {@code controller.quorum.voters}, hence no {@code --standalone}).
 *
 * <p>The class path defaults to this JVM's {@code java.class.path}, which holds
 * {@code kafka_2.13} whenever the testkit is on the test class path; the Kafka version is thus
 * the project's own. The broker listens on {@code PLAINTEXT://127.0.0.1:<brokerPort>} and its
 * controller on {@code CONTROLLER://127.0.0.1:<controllerPort>}; it is configured for one node
 * (replication factors and min ISR of the internal topics 1, no initial rebalance delay),
 * {@code auto.create.topics.enable=false}, {@code message.max.bytes} and
 * {@code replica.fetch.max.bytes} 16 MiB (records of a few MiB, transactions over 4 MiB),
 * {@code log.cleaner.backoff.ms=1000}, {@code broker.session.timeout.ms=3000} (heartbeat 500 ms,
 * so that a broker started again after {@link #kill()} can register within seconds rather than
 * waiting 9 s for its dead predecessor's session to expire), and runs with {@code -Xmx512m}. Any
 * broker property can be overridden with {@link Builder#brokerProperty(String, String)}.
 *
 * <p>The broker's log (INFO, through the child's SLF4J binding) goes to {@link #logFile()} and is
 * kept after {@link #close()}; the data directory ({@code log.dirs}) is deleted on close unless a
 * start failed, {@link Builder#keepData(boolean)} is set or the system property
 * {@code watchfanout.testkit.keepData=true} is given.
 *
 * <p>Usage, a private broker for a destructive test:
 * <pre>{@code
 * try (KafkaBroker kafka = KafkaBroker.builder().build().start()) {
 *     ... Map.of("bootstrap.servers", kafka.bootstrapServers()) ...
 *     kafka.stop();     // SIGTERM, controlled shutdown
 *     kafka.start();    // same data dir, same ports
 * }
 * }</pre>
 * The shared broker of a test JVM comes from {@link KafkaExtension}; a replicated cluster of
 * several such brokers from {@link KafkaCluster}, which sets {@link Builder#nodeId(int)} and
 * {@link Builder#quorumVoters(String)}.
 *
 * <p>With {@link Builder#saslSsl(Pki)} the broker has a third listener for clients,
 * {@code SASL_SSL://127.0.0.1:<saslSslPort>}: TLS with a server certificate of the {@link Pki} (a
 * PEM key store) and SASL/PLAIN with the {@link Builder#saslUser users} given; the broker's own
 * and the controller's traffic stays on the PLAINTEXT listeners. A client of it takes
 * {@link #saslSslBootstrapServers()} and {@link #saslClientProperties(String)} (or the file of
 * {@link #writeSaslClientConfig(Path, String)}, what {@code --kafka-config} reads).
 *
 * <p>Thread-safety: all methods may be called from any thread; lifecycle methods are serialized
 * and block until done. Errors are reported as {@link IllegalStateException} whose message names
 * the log file and holds its last lines; an interrupt while waiting restores the interrupt flag
 * and throws {@link IllegalStateException}.
 */
public final class KafkaBroker extends ServerProcess {
    /** Default {@code message.max.bytes} and {@code replica.fetch.max.bytes}: 16 MiB. */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 16 << 20;
    /** Default maximum heap of the broker JVM, as for {@code -Xmx}. */
    public static final String DEFAULT_MAX_HEAP = "512m";

    private static final Logger LOG = LoggerFactory.getLogger(KafkaBroker.class);
    private static final String MAIN_CLASS = "kafka.Kafka";
    private static final String STORAGE_TOOL = "kafka.tools.StorageTool";

    private final String classpath;
    private final String maxHeap;
    private final List<String> jvmArgs;
    private final Map<String, String> propertyOverrides;
    private final Duration startTimeout;
    private final Path propertiesFile;
    private final int brokerPort;
    private final int controllerPort;
    private final String clusterId;
    private final int nodeId;
    private final String quorumVoters;
    /** The PKI of the SASL_SSL listener, or null for none. */
    private final Pki pki;

    private final int saslSslPort;
    private final Map<String, String> saslUsers;
    private boolean configured; // guarded by this: configuration files written

    /** Creates a broker with all defaults (not started yet; call {@link #start()}). */
    public KafkaBroker() {
        this(builder());
    }

    private KafkaBroker(Builder b) {
        super("Kafka broker", b.workDirOrNew("kafka"), "kafka.log", b.stopTimeout, b.keepData);
        this.classpath = b.classpath != null ? b.classpath : System.getProperty("java.class.path");
        this.maxHeap = b.maxHeap;
        this.jvmArgs = List.copyOf(b.jvmArgs);
        this.propertyOverrides = new LinkedHashMap<>(b.properties);
        this.startTimeout = b.startTimeout;
        this.propertiesFile = workDir.resolve("server.properties");
        this.brokerPort = b.brokerPort != 0 ? b.brokerPort : FreePorts.pick();
        this.controllerPort = b.controllerPort != 0 ? b.controllerPort : FreePorts.pick();
        this.clusterId = b.clusterId != null ? b.clusterId : Uuid.randomUuid().toString();
        this.nodeId = b.nodeId;
        this.quorumVoters = b.quorumVoters != null ? b.quorumVoters : nodeId + "@127.0.0.1:" + controllerPort;
        this.pki = b.pki;
        this.saslSslPort = pki == null ? 0 : FreePorts.pick();
        this.saslUsers = Map.copyOf(b.saslUsers);
        if (pki != null && saslUsers.isEmpty()) {
            throw new IllegalArgumentException("a SASL_SSL listener needs at least one saslUser(name, password)");
        }
    }

    /**
     * Returns a builder for a broker with non-default settings.
     *
     * @return a new builder; not thread-safe
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Formats the storage (first start only), starts the broker JVM and waits until an
     * {@link Admin} {@code describeCluster} through this broker lists its own node id (the
     * controller has registered and unfenced it). Calling it again after {@link #stop()} or
     * {@link #kill()} starts the broker again on the same data directory and ports. Takes 4–10 s
     * on a 2-core machine. A broker of a {@link KafkaCluster} can only become ready while a
     * majority of the controller quorum runs.
     *
     * @return this broker
     * @throws IllegalStateException if the class path lacks {@code kafka.Kafka}, formatting fails,
     *     the broker is already running, exits early or is not ready within the start timeout
     *     (default 120 s); the message holds the tail of the log
     */
    @Override
    public synchronized KafkaBroker start() {
        launch();
        awaitReady();
        return this;
    }

    /**
     * The first half of {@link #start()}: formats the storage if needed and starts the JVM,
     * without waiting. {@link KafkaCluster} launches every node before it waits for any, since
     * no node of a multi-node quorum is ready before a majority runs.
     */
    synchronized void launch() {
        prepareStorage();
        if (process == null) {
            process = new ManagedProcess(
                    "kafka-" + nodeId + " :" + brokerPort,
                    javaCommand(maxHeap, MAIN_CLASS, List.of(propertiesFile.toString())),
                    Map.of(),
                    workDir,
                    logFile);
        }
        process.launch();
    }

    /**
     * Writes the configuration (first call only) and formats the storage if it is not formatted
     * yet. {@link KafkaCluster} runs this for all its nodes at once: each format is a JVM of its
     * own that takes seconds to start.
     */
    synchronized void prepareStorage() {
        if (closed) {
            throw new IllegalStateException("Kafka broker on port " + brokerPort + " is closed");
        }
        if (!configured) {
            writeConfigFiles();
            configured = true;
        }
        if (!Files.exists(dataDir.resolve("meta.properties"))) {
            format();
        }
    }

    private void writeConfigFiles() {
        if (classpath == null || classpath.isBlank()) {
            throw new IllegalStateException("empty class path for the Kafka broker (expected: the jars of"
                    + " org.apache.kafka:kafka_2.13 and its dependencies)");
        }
        Map<String, String> props = new LinkedHashMap<>();
        props.put("node.id", Integer.toString(nodeId));
        props.put("process.roles", "broker,controller");
        props.put("controller.quorum.voters", quorumVoters);
        props.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        props.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("log.dirs", dataDir.toString());
        props.put("num.partitions", "1");
        props.put("default.replication.factor", "1");
        props.put("min.insync.replicas", "1");
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "5");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("transaction.state.log.num.partitions", "5");
        props.put("share.coordinator.state.topic.replication.factor", "1");
        props.put("share.coordinator.state.topic.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("auto.create.topics.enable", "false");
        props.put("message.max.bytes", Integer.toString(DEFAULT_MAX_MESSAGE_BYTES));
        props.put("replica.fetch.max.bytes", Integer.toString(DEFAULT_MAX_MESSAGE_BYTES));
        props.put("log.cleaner.backoff.ms", "1000");
        // A test that gives a topic a tiny retention.ms sees its old segments deleted within a
        // second or two instead of at the default five-minute check.
        props.put("log.retention.check.interval.ms", "1000");
        // After a SIGKILL the restarted broker cannot register until the controller has expired
        // the dead incarnation's session (DUPLICATE_BROKER_REGISTRATION): 9 s by default, which
        // made a kill+start take 12.4 s here; 3 s (6 missed heartbeats) makes it ~6 s.
        props.put("broker.heartbeat.interval.ms", "500");
        props.put("broker.session.timeout.ms", "3000");
        props.put("num.network.threads", "2");
        props.put("num.io.threads", "4");
        if (pki != null) {
            saslSslListener(props);
        }
        props.putAll(propertyOverrides);

        StringBuilder text = new StringBuilder("# written by the watch-fanout testkit (KafkaBroker)\n");
        props.forEach((k, v) ->
                text.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        String logback = "<configuration>\n"
                + "  <appender name=\"OUT\" class=\"ch.qos.logback.core.ConsoleAppender\">\n"
                + "    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{40} - %msg%n</pattern></encoder>\n"
                + "  </appender>\n"
                + "  <logger name=\"state.change.logger\" level=\"WARN\"/>\n"
                + "  <logger name=\"kafka.request.logger\" level=\"WARN\"/>\n"
                + "  <root level=\"INFO\"><appender-ref ref=\"OUT\"/></root>\n"
                + "</configuration>\n";
        String log4j2 = "status = warn\n"
                + "appender.out.type = Console\n"
                + "appender.out.name = OUT\n"
                + "appender.out.layout.type = PatternLayout\n"
                + "appender.out.layout.pattern = %d{HH:mm:ss.SSS} %-5p [%t] %c{1.} - %m%n\n"
                + "logger.statechange.name = state.change.logger\n"
                + "logger.statechange.level = warn\n"
                + "rootLogger.level = info\n"
                + "rootLogger.appenderRef.out.ref = OUT\n";
        try {
            Files.createDirectories(dataDir);
            Files.writeString(propertiesFile, text, StandardCharsets.UTF_8);
            Files.writeString(workDir.resolve("logback.xml"), logback, StandardCharsets.UTF_8);
            Files.writeString(workDir.resolve("log4j2.properties"), log4j2, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the broker's configuration in " + workDir, e);
        }
        ManagedProcess.writeClasspathArgFile(workDir.resolve("classpath.args"), classpath);
    }

    /** The SASL_SSL listener: a PEM key store of the server certificate, SASL/PLAIN users in its JAAS config. */
    private void saslSslListener(Map<String, String> props) {
        Pki.Issued server = pki.server("kafka-" + nodeId + "-" + saslSslPort, "kafka");
        Path keyStore = workDir.resolve("kafka-keystore.pem");
        try {
            // Kafka's PEM key store is one file: the private key, then the certificate chain.
            Files.createDirectories(workDir);
            Files.writeString(
                    keyStore,
                    Files.readString(server.key(), StandardCharsets.US_ASCII)
                            + Files.readString(server.cert(), StandardCharsets.US_ASCII),
                    StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the broker's key store " + keyStore, e);
        }
        props.put("listeners", props.get("listeners") + ",SASL_SSL://127.0.0.1:" + saslSslPort);
        props.put("advertised.listeners", props.get("advertised.listeners") + ",SASL_SSL://127.0.0.1:" + saslSslPort);
        props.put("listener.security.protocol.map", props.get("listener.security.protocol.map") + ",SASL_SSL:SASL_SSL");
        props.put("sasl.enabled.mechanisms", "PLAIN");
        props.put("listener.name.sasl_ssl.ssl.keystore.type", "PEM");
        props.put("listener.name.sasl_ssl.ssl.keystore.location", keyStore.toString());
        StringBuilder jaas = new StringBuilder("org.apache.kafka.common.security.plain.PlainLoginModule required");
        saslUsers.forEach((user, password) -> jaas.append(" user_")
                .append(user)
                .append("=\"")
                .append(password)
                .append('"'));
        props.put(
                "listener.name.sasl_ssl.plain.sasl.jaas.config",
                jaas.append(';').toString());
    }

    private List<String> javaCommand(String heap, String mainClass, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ManagedProcess.javaExecutable());
        cmd.add("-Xmx" + heap);
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        cmd.add("-Djava.awt.headless=true");
        cmd.add("-Dlogback.configurationFile=" + workDir.resolve("logback.xml"));
        cmd.add("-Dlog4j2.configurationFile=" + workDir.resolve("log4j2.properties"));
        cmd.addAll(ManagedProcess.childJvmOptions());
        cmd.addAll(jvmArgs);
        cmd.add("@" + workDir.resolve("classpath.args"));
        cmd.add(mainClass);
        cmd.addAll(args);
        return cmd;
    }

    private void format() {
        ManagedProcess formatter = new ManagedProcess(
                "kafka-storage format",
                javaCommand("256m", STORAGE_TOOL, List.of("format", "-t", clusterId, "-c", propertiesFile.toString())),
                Map.of(),
                workDir,
                logFile);
        formatter.launch();
        var exit = formatter.waitForExit(startTimeout);
        if (exit.isEmpty() || exit.getAsInt() != 0) {
            formatter.kill();
            failed = true;
            throw new IllegalStateException("formatting Kafka storage " + dataDir + " failed ("
                    + (exit.isEmpty()
                            ? "timeout after " + startTimeout.toMillis() + " ms"
                            : "exit code " + exit.getAsInt())
                    + "; expected exit code 0; is kafka_2.13 on the class path?); log " + logFile
                    + ", last lines:\n" + formatter.logTail(40));
        }
    }

    /** The second half of {@link #start()}: waits until the broker is registered and unfenced. */
    void awaitReady() {
        long deadline = System.nanoTime() + startTimeout.toNanos();
        String lastProblem = "port " + brokerPort + " not open";
        boolean portOpen = false;
        Admin admin = null;
        try {
            while (true) {
                if (!process.isAlive()) {
                    failed = true;
                    throw new IllegalStateException("Kafka broker exited with code "
                            + process.exitCode().orElse(-1)
                            + " while starting (ports " + brokerPort + "/" + controllerPort + "); log " + logFile
                            + ", last lines:\n" + process.logTail(60));
                }
                if (!portOpen) {
                    portOpen = isPortOpen(brokerPort);
                }
                if (portOpen) {
                    if (admin == null) {
                        admin = Admin.create(Map.of(
                                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                                AdminClientConfig.CLIENT_ID_CONFIG, "testkit-readiness-" + brokerPort,
                                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000,
                                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000,
                                AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500));
                    }
                    try {
                        Collection<Node> nodes = admin.describeCluster(new DescribeClusterOptions().timeoutMs(5000))
                                .nodes()
                                .get(6, TimeUnit.SECONDS);
                        // Its own id, not just any: a broker restarted into a running cluster
                        // answers with the others' registrations before its own is accepted.
                        if (nodes.stream().anyMatch(n -> n.id() == nodeId)) {
                            LOG.info(
                                    "Kafka ready at {} (node {}, pid {}, data {}, log {})",
                                    bootstrapServers(),
                                    nodeId,
                                    process.pid(),
                                    dataDir,
                                    logFile);
                            return;
                        }
                        lastProblem = "describeCluster listed " + nodes + ", not node " + nodeId;
                    } catch (ExecutionException | TimeoutException e) {
                        lastProblem = "describeCluster: " + e;
                    } catch (InterruptedException e) {
                        throw ManagedProcess.interrupted("waiting for the Kafka broker", e);
                    }
                }
                if (System.nanoTime() >= deadline) {
                    failed = true;
                    throw new IllegalStateException("Kafka broker at " + bootstrapServers() + " not ready within "
                            + startTimeout.toMillis() + " ms (" + lastProblem + "); log " + logFile
                            + ", last lines:\n" + process.logTail(60));
                }
                ManagedProcess.sleep(100);
            }
        } finally {
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
            }
        }
    }

    private static boolean isPortOpen(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The {@code bootstrap.servers} value for clients.
     *
     * @return {@code 127.0.0.1:<brokerPort>}; stable across restarts
     */
    public String bootstrapServers() {
        return "127.0.0.1:" + brokerPort;
    }

    /**
     * The {@code bootstrap.servers} of the SASL_SSL listener.
     *
     * @return {@code 127.0.0.1:<saslSslPort>}; stable across restarts
     * @throws IllegalStateException without {@link Builder#saslSsl}
     */
    public String saslSslBootstrapServers() {
        requireSaslSsl();
        return "127.0.0.1:" + saslSslPort;
    }

    /**
     * What a client of the SASL_SSL listener needs besides {@code bootstrap.servers}:
     * {@code security.protocol=SASL_SSL}, {@code sasl.mechanism=PLAIN}, the user's
     * {@code sasl.jaas.config}, and the CA as a PEM trust store.
     *
     * @param user a {@link Builder#saslUser}
     * @return a new mutable map of Kafka client settings
     * @throws IllegalArgumentException for an unknown user
     * @throws IllegalStateException without {@link Builder#saslSsl}
     */
    public Map<String, String> saslClientProperties(String user) {
        requireSaslSsl();
        String password = saslUsers.get(user);
        if (password == null) {
            throw new IllegalArgumentException(
                    "no SASL user " + user + " (expected one of " + saslUsers.keySet() + ")");
        }
        Map<String, String> p = new LinkedHashMap<>();
        p.put("security.protocol", "SASL_SSL");
        p.put("sasl.mechanism", "PLAIN");
        p.put(
                "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user + "\" password=\""
                        + password + "\";");
        p.put("ssl.truststore.type", "PEM");
        p.put("ssl.truststore.location", pki.caCert().toString());
        return p;
    }

    /**
     * Writes {@link #saslClientProperties(String)} as a Java properties file, the form of
     * {@code --kafka-config}.
     *
     * @param file where to write it (replaced)
     * @param user a {@link Builder#saslUser}
     * @return {@code file}
     * @throws UncheckedIOException if it cannot be written
     */
    public Path writeSaslClientConfig(Path file, String user) {
        Properties p = new Properties();
        p.putAll(saslClientProperties(user));
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            p.store(
                    w,
                    "Kafka client settings of the SASL_SSL listener " + saslSslBootstrapServers() + ", user " + user);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
        return file;
    }

    private void requireSaslSsl() {
        if (pki == null) {
            throw new IllegalStateException(
                    "the Kafka broker at " + bootstrapServers() + " has no SASL_SSL listener (builder().saslSsl(pki))");
        }
    }

    /**
     * The loopback TCP port of the PLAINTEXT (client) listener.
     *
     * @return the port; stable across restarts
     */
    public int brokerPort() {
        return brokerPort;
    }

    /**
     * The loopback TCP port of the KRaft CONTROLLER listener.
     *
     * @return the port; stable across restarts
     */
    public int controllerPort() {
        return controllerPort;
    }

    /**
     * The KRaft {@code node.id} of this broker (and controller).
     *
     * @return 1 unless set with {@link Builder#nodeId(int)}
     */
    public int nodeId() {
        return nodeId;
    }

    /**
     * The cluster id the storage was formatted with.
     *
     * @return a base64 Kafka {@link Uuid}
     */
    public String clusterId() {
        return clusterId;
    }

    @Override
    String address() {
        return bootstrapServers();
    }

    /**
     * Settings of a {@link KafkaBroker}. Not thread-safe; each setter returns this builder.
     */
    public static final class Builder extends LifecycleBuilder<Builder> {
        private String classpath;
        private String maxHeap = DEFAULT_MAX_HEAP;
        private final List<String> jvmArgs = new ArrayList<>();
        private final Map<String, String> properties = new LinkedHashMap<>();
        private String clusterId;
        private int brokerPort;
        private int controllerPort;
        private int nodeId = 1;
        private String quorumVoters;
        private Pki pki;
        private final Map<String, String> saslUsers = new LinkedHashMap<>();

        private Builder() {
            super(Duration.ofSeconds(120), Duration.ofSeconds(60));
        }

        /**
         * The KRaft {@code node.id}; default 1. Each node of a {@link KafkaCluster} has its own.
         *
         * @param nodeId a non-negative id, unique in the cluster
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder nodeId(int nodeId) {
            if (nodeId < 0) {
                throw new IllegalArgumentException("nodeId: " + nodeId + " (expected: >= 0)");
            }
            this.nodeId = nodeId;
            return this;
        }

        /**
         * The static controller quorum ({@code controller.quorum.voters}); default this node
         * alone: {@code <nodeId>@127.0.0.1:<controllerPort>}. {@link KafkaCluster} sets every
         * node's to all of them, which needs fixed {@link #controllerPort(int)}s.
         *
         * @param voters {@code id@host:port} entries separated by commas
         * @return this builder
         */
        public Builder quorumVoters(String voters) {
            this.quorumVoters = Objects.requireNonNull(voters, "voters");
            return this;
        }

        /**
         * A fixed PLAINTEXT port (e.g. 9092 for a local stack); default 0: a free port.
         *
         * @param port 0 or a TCP port, bound on 127.0.0.1
         * @return this builder
         * @throws IllegalArgumentException if outside [0, 65535]
         */
        public Builder brokerPort(int port) {
            this.brokerPort = requirePort(port, "brokerPort");
            return this;
        }

        /**
         * A fixed CONTROLLER port; default 0: a free port.
         *
         * @param port 0 or a TCP port, bound on 127.0.0.1
         * @return this builder
         * @throws IllegalArgumentException if outside [0, 65535]
         */
        public Builder controllerPort(int port) {
            this.controllerPort = requirePort(port, "controllerPort");
            return this;
        }

        /**
         * The class path of the broker JVM; default this JVM's {@code java.class.path}. It must
         * hold {@code kafka_2.13} and its dependencies (e.g. from
         * {@code mvn dependency:build-classpath} for {@code bin/local-stack}).
         *
         * @param classpath entries separated by {@code :}
         * @return this builder
         */
        public Builder classpath(String classpath) {
            this.classpath = Objects.requireNonNull(classpath, "classpath");
            return this;
        }

        /**
         * The broker JVM's maximum heap; default {@value KafkaBroker#DEFAULT_MAX_HEAP}.
         *
         * @param maxHeap a {@code -Xmx} value such as {@code 512m} or {@code 1g}
         * @return this builder
         */
        public Builder maxHeap(String maxHeap) {
            this.maxHeap = Objects.requireNonNull(maxHeap, "maxHeap");
            return this;
        }

        /**
         * An extra JVM option for the broker (and the storage formatter).
         *
         * @param arg e.g. {@code -XX:+UseSerialGC}
         * @return this builder
         */
        public Builder jvmArg(String arg) {
            this.jvmArgs.add(Objects.requireNonNull(arg, "arg"));
            return this;
        }

        /**
         * Sets or overrides one {@code server.properties} entry, e.g.
         * {@code brokerProperty("log.retention.check.interval.ms", "1000")}.
         *
         * @param key the broker config name
         * @param value its value
         * @return this builder
         */
        public Builder brokerProperty(String key, String value) {
            this.properties.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * The cluster id to format the storage with; default a random {@link Uuid}.
         *
         * @param clusterId a base64 Kafka Uuid (22 characters)
         * @return this builder
         */
        public Builder clusterId(String clusterId) {
            this.clusterId = Objects.requireNonNull(clusterId, "clusterId");
            return this;
        }

        /**
         * Adds a SASL_SSL listener for clients on a free port: TLS with a server certificate of
         * {@code pki} (for {@code localhost} and the loopback addresses) and SASL/PLAIN with the
         * {@link #saslUser}s (at least one). The PLAINTEXT listener stays, for the broker itself.
         *
         * @param pki the CA; the broker's certificate is issued into its directory
         * @return this builder
         */
        public Builder saslSsl(Pki pki) {
            this.pki = Objects.requireNonNull(pki, "pki");
            return this;
        }

        /**
         * A SASL/PLAIN user of the SASL_SSL listener.
         *
         * @param user the name
         * @param password its password, without double quotes or backslashes
         * @return this builder
         */
        public Builder saslUser(String user, String password) {
            this.saslUsers.put(Objects.requireNonNull(user, "user"), Objects.requireNonNull(password, "password"));
            return this;
        }

        /**
         * Creates the broker (picks its ports; does not start it).
         *
         * @return a new broker
         */
        public KafkaBroker build() {
            return new KafkaBroker(this);
        }
    }
}
