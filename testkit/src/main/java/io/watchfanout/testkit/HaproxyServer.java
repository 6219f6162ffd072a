package io.watchfanout.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HAProxy (Debian's {@code haproxy}) in front of fan-out nodes on 127.0.0.1: one address for the
 * nodes' HTTP ports (the watch API and the Kubernetes API) and one for their etcd v3 API (gRPC),
 * so that a client that loses its node reconnects to the same address and lands on another, as
 * behind a Kubernetes Service. Each node is health-checked on its {@code /readyz} (200 once its
 * cache caught up with Kafka) every second; two failed checks take it out, and its remaining
 * connections are closed then, so that their clients reconnect instead of waiting on a node that
 * hangs. A connection refused by a dead node that is not yet marked down goes to another node
 * ({@code option redispatch}).
 *
 * <p>Watches live long: client and server timeouts are an hour of silence (a node sends bookmarks
 * or progress notifications far more often). HTTP is balanced per request ({@code mode http})
 * when the nodes speak plain HTTP; with TLS ({@link Builder#tls}) both ports are passed through
 * as TCP, so that the nodes still see their clients' certificates, and only the health checks
 * speak TLS (unverified: they read a status code). The etcd API is always TCP: one gRPC connection
 * carries every stream of a client, and a client's connections go to one node (by client address),
 * since an etcd auth token is known only to the node that issued it.
 *
 * <p>The configuration is written to {@code haproxy.cfg} in the work directory, HAProxy's log to
 * {@code haproxy.log} there. Thread-safety: as {@link EtcdServer}.
 */
public final class HaproxyServer extends ServerProcess {
    private static final Logger LOG = LoggerFactory.getLogger(HaproxyServer.class);

    /** What to install when {@link #executable()} finds nothing. */
    public static final String DEBIAN_PACKAGE = "haproxy";

    private final int httpPort;
    private final int etcdApiPort;
    private final List<Node> nodes;
    private final boolean tls;
    private final Duration startTimeout;
    private final Path configFile;

    /**
     * One fan-out node behind the balancer.
     *
     * @param httpPort the node's HTTP port on 127.0.0.1 (also where {@code /readyz} is checked)
     * @param etcdApiPort the node's etcd API port on 127.0.0.1
     */
    public record Node(int httpPort, int etcdApiPort) {}

    private HaproxyServer(Builder b) {
        super("HAProxy", b.workDirOrNew("haproxy"), "haproxy.log", b.stopTimeout, b.keepData);
        this.httpPort = b.httpPort;
        this.etcdApiPort = b.etcdApiPort;
        this.nodes = List.copyOf(b.nodes);
        this.tls = b.tls;
        this.startTimeout = b.startTimeout;
        this.configFile = workDir.resolve("haproxy.cfg");
    }

    /**
     * A new builder.
     *
     * @return a builder with no node yet
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The {@code haproxy} binary on {@code PATH}.
     *
     * @return its path, or empty when it is not installed
     */
    public static Optional<Path> executable() {
        String path = Objects.requireNonNullElse(System.getenv("PATH"), "");
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "haproxy"))) {
                return Optional.of(Path.of(dir, "haproxy"));
            }
        }
        return Optional.empty();
    }

    /**
     * The balanced HTTP address.
     *
     * @return {@code http://127.0.0.1:<port>}, {@code https://} with TLS
     */
    public String httpUrl() {
        return (tls ? "https" : "http") + "://127.0.0.1:" + httpPort;
    }

    /**
     * The balanced etcd API endpoint, as etcdctl's {@code --endpoints} takes it.
     *
     * @return {@code 127.0.0.1:<port>}
     */
    public String etcdApiEndpoint() {
        return "127.0.0.1:" + etcdApiPort;
    }

    @Override
    String address() {
        return httpUrl();
    }

    /**
     * Writes the configuration, starts HAProxy and waits until both ports accept connections (and,
     * without TLS, a node answers {@code /readyz} through it). Calling it again after
     * {@link #stop()} or {@link #kill()} starts it again on the same ports.
     *
     * @return this server
     * @throws IllegalStateException if haproxy is not installed (names the Debian package), refuses
     *     its configuration, exits early or does not serve within the start timeout (with log tail)
     */
    @Override
    public synchronized HaproxyServer start() {
        if (closed) {
            throw new IllegalStateException("HAProxy on port " + httpPort + " is closed");
        }
        Path binary = executable()
                .orElseThrow(() -> new IllegalStateException(
                        "haproxy not found on PATH (expected: Debian's haproxy, apt-get install " + DEBIAN_PACKAGE
                                + ")"));
        try {
            Files.createDirectories(workDir);
            Files.writeString(configFile, config(httpPort, etcdApiPort, nodes, tls), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + configFile, e);
        }
        if (process == null) {
            // -db: in the foreground, logging to stdout (the log file), stopped by SIGTERM.
            process = new ManagedProcess(
                    "HAProxy :" + httpPort,
                    List.of(binary.toString(), "-db", "-f", configFile.toString()),
                    Map.of(),
                    workDir,
                    logFile);
        }
        process.launch();
        awaitServing();
        LOG.info(
                "HAProxy ready at {} and {} (pid {}, config {}, log {})",
                httpUrl(),
                etcdApiEndpoint(),
                process.pid(),
                configFile,
                logFile);
        return this;
    }

    private void awaitServing() {
        long deadline = System.nanoTime() + startTimeout.toNanos();
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        String last = "no answer";
        while (true) {
            if (!process.isAlive()) {
                failed = true;
                throw new IllegalStateException(
                        "HAProxy exited with code " + process.exitCode().orElse(-1)
                                + " while starting (config " + configFile + "); log " + logFile + ", last lines:\n"
                                + process.logTail(40));
            }
            try {
                if (accepts(etcdApiPort) && (tls ? accepts(httpPort) : readyThrough(http))) {
                    return;
                }
                last = "no node ready behind it";
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                throw ManagedProcess.interrupted("waiting for HAProxy", e);
            }
            if (System.nanoTime() >= deadline) {
                failed = true;
                throw new IllegalStateException("HAProxy at " + httpUrl() + " not serving within "
                        + startTimeout.toMillis() + " ms (" + last + "); log " + logFile + ", last lines:\n"
                        + process.logTail(40));
            }
            ManagedProcess.sleep(50);
        }
    }

    private static boolean accepts(int port) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2_000);
            return true;
        }
    }

    private boolean readyThrough(HttpClient http) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(httpUrl() + "/readyz"))
                .timeout(Duration.ofSeconds(5))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    }

    /**
     * HAProxy's configuration for {@code nodes} (see the class comment).
     *
     * @param httpPort the balanced HTTP port
     * @param etcdApiPort the balanced etcd API port
     * @param nodes the fan-out nodes, at least one
     * @param tls whether the nodes speak TLS on both ports
     * @return the text of {@code haproxy.cfg}
     */
    static String config(int httpPort, int etcdApiPort, List<Node> nodes, boolean tls) {
        String httpMode = tls ? "tcp" : "http";
        String check = tls ? "check check-ssl verify none" : "check";
        StringBuilder s = new StringBuilder();
        s.append("# Written by the watch-fanout local stack at each start; edits are lost.\n");
        s.append("global\n");
        s.append("    log stdout format raw local0 info\n");
        s.append("    maxconn 4000\n");
        s.append("    nbthread 1\n");
        s.append("\n");
        s.append("defaults\n");
        s.append("    log global\n");
        s.append("    timeout connect 2s\n");
        // A watch is one long response: only an hour without a byte (no event, no bookmark) ends it.
        s.append("    timeout client 1h\n");
        s.append("    timeout server 1h\n");
        s.append("    timeout tunnel 1h\n");
        s.append("    timeout client-fin 5s\n");
        s.append("    timeout server-fin 5s\n");
        s.append("    timeout http-request 10s\n");
        s.append("    timeout http-keep-alive 60s\n");
        s.append("    retries 3\n");
        s.append("    option redispatch\n");
        s.append("    default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions\n");
        s.append("\n");
        s.append("frontend http\n");
        s.append("    mode ").append(httpMode).append('\n');
        s.append("    bind 127.0.0.1:").append(httpPort).append('\n');
        s.append(tls ? "    option tcplog\n" : "    option httplog\n");
        s.append("    default_backend nodes-http\n");
        s.append("\n");
        s.append("backend nodes-http\n");
        s.append("    mode ").append(httpMode).append('\n');
        s.append("    balance leastconn\n");
        s.append("    option httpchk\n");
        s.append("    http-check send meth GET uri /readyz\n");
        for (Node n : nodes) {
            s.append(String.format(
                    Locale.ROOT, "    server node-%d 127.0.0.1:%d %s%n", n.httpPort(), n.httpPort(), check));
        }
        s.append("\n");
        s.append("frontend etcd-api\n");
        s.append("    mode tcp\n");
        s.append("    bind 127.0.0.1:").append(etcdApiPort).append('\n');
        s.append("    option tcplog\n");
        s.append("    default_backend nodes-etcd-api\n");
        s.append("\n");
        s.append("backend nodes-etcd-api\n");
        s.append("    mode tcp\n");
        // An etcd auth token is known only to the node that answered its Authenticate, and
        // etcdctl authenticates on a connection of its own: a client's connections stay on one
        // node while it is up (by client address), and move together when it goes down.
        s.append("    balance source\n");
        // The etcd API port has no /readyz of its own: the node's HTTP port answers for it.
        s.append("    option httpchk\n");
        s.append("    http-check send meth GET uri /readyz\n");
        for (Node n : nodes) {
            s.append(String.format(
                    Locale.ROOT,
                    "    server node-%d 127.0.0.1:%d %s port %d%n",
                    n.httpPort(),
                    n.etcdApiPort(),
                    check,
                    n.httpPort()));
        }
        return s.toString();
    }

    /**
     * Settings of a {@link HaproxyServer}: its two ports and the nodes behind it. Not thread-safe.
     */
    public static final class Builder extends LifecycleBuilder<Builder> {
        private int httpPort;
        private int etcdApiPort;
        private final List<Node> nodes = new ArrayList<>();
        private boolean tls;

        private Builder() {
            super(Duration.ofSeconds(30), Duration.ofSeconds(10));
        }

        /**
         * The balanced HTTP port on 127.0.0.1.
         *
         * @param port 1..65535
         * @return this builder
         */
        public Builder httpPort(int port) {
            this.httpPort = requirePort(port, "httpPort");
            return this;
        }

        /**
         * The balanced etcd API port on 127.0.0.1.
         *
         * @param port 1..65535
         * @return this builder
         */
        public Builder etcdApiPort(int port) {
            this.etcdApiPort = requirePort(port, "etcdApiPort");
            return this;
        }

        /**
         * Adds a fan-out node behind both ports.
         *
         * @param nodeHttpPort the node's HTTP port
         * @param nodeEtcdApiPort the node's etcd API port
         * @return this builder
         */
        public Builder node(int nodeHttpPort, int nodeEtcdApiPort) {
            nodes.add(new Node(
                    requirePort(nodeHttpPort, "nodeHttpPort"), requirePort(nodeEtcdApiPort, "nodeEtcdApiPort")));
            return this;
        }

        /**
         * Whether the nodes speak TLS on both ports (then both are passed through as TCP).
         *
         * @param enabled true for TLS; default false
         * @return this builder
         */
        public Builder tls(boolean enabled) {
            this.tls = enabled;
            return this;
        }

        /**
         * Builds the server (not started).
         *
         * @return a new server
         * @throws IllegalStateException if a port or every node is missing
         */
        public HaproxyServer build() {
            if (httpPort == 0 || etcdApiPort == 0 || nodes.isEmpty()) {
                throw new IllegalStateException("HAProxy needs httpPort, etcdApiPort and at least one node (have "
                        + httpPort + ", " + etcdApiPort + ", " + nodes + ")");
            }
            return new HaproxyServer(this);
        }
    }
}
