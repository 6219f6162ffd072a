package io.watchfanout.testkit;

import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.auth.Permission;
import io.etcd.jetcd.options.OptionsUtil;
import java.io.File;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-member etcd server (the {@code etcd} binary, Debian package {@code etcd-server})
 * running as a child process on two free loopback ports, with its own data directory.
 *
 * <p>Started with {@code --experimental-watch-progress-notify-interval} (default 1 s, so that
 * progress notifications come quickly in tests), {@code --max-request-bytes} 10 MiB (values of
 * 1.4 MiB and multi-MiB transactions) and {@code --quota-backend-bytes} 4 GiB. etcd's own log
 * (zap JSON lines) goes to {@link #logFile()}, next to the data directory, and is kept after
 * {@link #close()}; the data directory is deleted on close unless a start failed,
 * {@link Builder#keepData(boolean)} is set or the system property
 * {@code watchfanout.testkit.keepData=true} is given.
 *
 * <p>Usage, a private server for a destructive test:
 * <pre>{@code
 * try (EtcdServer etcd = EtcdServer.builder().build().start()) {
 *     Client client = Client.builder().endpoints(etcd.clientUrl()).build();
 *     ...
 *     etcd.kill();      // SIGKILL
 *     etcd.restart();   // same data dir, same ports
 * }
 * }</pre>
 * The shared server of a test JVM comes from {@link EtcdExtension}.
 *
 * <p>Secured, as production runs it: {@link Builder#tls(Pki)} serves clients on
 * {@code https} with a certificate of the {@link Pki} and requires client certificates of its CA
 * ({@code --client-cert-auth}); {@link Builder#rootPassword(String)} and
 * {@link Builder#user(String, String, Permission.Type, String)} create users and enable
 * authentication on the first start:
 * <pre>{@code
 * Pki pki = Pki.create(dir, "ca");
 * try (EtcdServer etcd = EtcdServer.builder().tls(pki).rootPassword("root-pw")
 *         .user("ingester", "ingester-pw", Permission.Type.READ, "/registry/").build().start()) {
 *     Client root = etcd.clientBuilder().user(bs("root")).password(bs("root-pw")).build();
 *     ... --etcd-endpoints etcd.clientUrl() --etcd-cacert etcd.caCert()
 *         --etcd-cert etcd.clientCert().cert() --etcd-key etcd.clientCert().key() ...
 * }
 * }</pre>
 *
 * <p>Thread-safety: all methods may be called from any thread; lifecycle methods ({@link #start},
 * {@link #stop}, {@link #kill}, {@link #restart}, {@link #close}) are serialized and block until
 * done. Errors are reported as {@link IllegalStateException} whose message names the log file
 * and holds its last lines; an interrupt while waiting restores the interrupt flag and throws
 * {@link IllegalStateException}.
 */
public final class EtcdServer extends ServerProcess {
    /** Default interval of etcd's periodic watch progress notifications: 1 s. */
    public static final Duration DEFAULT_PROGRESS_NOTIFY_INTERVAL = Duration.ofSeconds(1);
    /** Default {@code --max-request-bytes}: 10 MiB. */
    public static final long DEFAULT_MAX_REQUEST_BYTES = 10L << 20;
    /** Default {@code --quota-backend-bytes}: 4 GiB. */
    public static final long DEFAULT_QUOTA_BACKEND_BYTES = 4L << 30;

    private static final Logger LOG = LoggerFactory.getLogger(EtcdServer.class);

    private final String executable;
    private final Duration progressNotifyInterval;
    private final long maxRequestBytes;
    private final long quotaBackendBytes;
    private final Duration startTimeout;
    private final List<String> extraArgs;
    private final int clientPort;
    private final int peerPort;
    /** The PKI of {@link Builder#tls}, or null for plaintext. */
    private final Pki pki;
    /** etcd's server certificate and the testkit's client certificate, when TLS. */
    private final Pki.Issued serverCert;

    private final Pki.Issued clientCert;
    /** Plain HTTP {@code /health} and {@code /metrics} ({@code --listen-metrics-urls}), when TLS. */
    private final int metricsPort;

    private final String rootPassword;
    /** Written into the work directory once authentication is enabled, so that a restart on the kept data skips it. */
    private static final String AUTH_ENABLED_MARKER = "auth-enabled";

    private final List<User> users;
    private boolean authEnabled; // guarded by this: the users exist and authentication is on
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    /** Creates a server with all defaults (not started yet; call {@link #start()}). */
    public EtcdServer() {
        this(builder());
    }

    private EtcdServer(Builder b) {
        super("etcd", b.workDirOrNew("etcd"), "etcd.log", b.stopTimeout, b.keepData);
        this.executable = b.executable;
        this.progressNotifyInterval = b.progressNotifyInterval;
        this.maxRequestBytes = b.maxRequestBytes;
        this.quotaBackendBytes = b.quotaBackendBytes;
        this.startTimeout = b.startTimeout;
        this.extraArgs = List.copyOf(b.extraArgs);
        this.clientPort = b.clientPort != 0 ? b.clientPort : FreePorts.pick();
        this.peerPort = b.peerPort != 0 ? b.peerPort : FreePorts.pick();
        this.pki = b.pki;
        this.serverCert = pki == null ? null : pki.server("etcd-" + clientPort, "etcd");
        this.clientCert = pki == null ? null : pki.client("etcd-" + clientPort + "-client", "watchfanout-testkit");
        this.metricsPort = pki == null ? 0 : FreePorts.pick();
        this.rootPassword = b.rootPassword;
        this.users = List.copyOf(b.users);
        if (rootPassword == null && !users.isEmpty()) {
            throw new IllegalArgumentException("users need authentication: set rootPassword(...) too");
        }
    }

    /** A user of {@link Builder#user}: a role {@code <name>} with one permission on a key prefix. */
    private record User(String name, String password, Permission.Type permission, String keyPrefix) {}

    /**
     * Returns a builder for a server with non-default settings.
     *
     * @return a new builder; not thread-safe
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts etcd and waits until {@code GET /health} reports healthy. Calling it again after
     * {@link #stop()} or {@link #kill()} starts etcd again on the same data dir and ports.
     *
     * @return this server
     * @throws IllegalStateException if the binary is missing (names the Debian package), etcd is
     *     already running, exits early or is not healthy within the start timeout (with log tail)
     */
    @Override
    public synchronized EtcdServer start() {
        if (closed) {
            throw new IllegalStateException("etcd on port " + clientPort + " is closed");
        }
        if (process == null) {
            process = new ManagedProcess("etcd :" + clientPort, command(), environment(), workDir, logFile);
        }
        process.launch();
        awaitHealthy();
        // A restart on kept data finds the users and authentication already there.
        if (rootPassword != null && !authEnabled && Files.exists(workDir.resolve(AUTH_ENABLED_MARKER))) {
            authEnabled = true;
        }
        if (rootPassword != null && !authEnabled) {
            enableAuth();
            authEnabled = true;
            try {
                Files.writeString(
                        workDir.resolve(AUTH_ENABLED_MARKER), "users and authentication are in etcd's data\n");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + workDir.resolve(AUTH_ENABLED_MARKER), e);
            }
        }
        LOG.info("etcd ready at {} (pid {}, data {}, log {})", clientUrl(), process.pid(), dataDir, logFile);
        return this;
    }

    private List<String> command() {
        String binary = resolveExecutable(executable);
        String peerUrl = "http://127.0.0.1:" + peerPort;
        List<String> cmd = new ArrayList<>(List.of(
                binary,
                "--name",
                "testkit",
                "--data-dir",
                dataDir.toString(),
                "--listen-client-urls",
                clientUrl(),
                "--advertise-client-urls",
                clientUrl(),
                "--listen-peer-urls",
                peerUrl,
                "--initial-advertise-peer-urls",
                peerUrl,
                "--initial-cluster",
                "testkit=" + peerUrl,
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                "testkit-" + clientPort,
                "--experimental-watch-progress-notify-interval",
                toGoDuration(progressNotifyInterval),
                "--max-request-bytes",
                Long.toString(maxRequestBytes),
                "--quota-backend-bytes",
                Long.toString(quotaBackendBytes),
                "--logger",
                "zap",
                "--log-outputs",
                "stderr"));
        if (pki != null) {
            cmd.addAll(List.of(
                    "--cert-file",
                    serverCert.cert().toString(),
                    "--key-file",
                    serverCert.key().toString(),
                    "--trusted-ca-file",
                    pki.caCert().toString(),
                    "--client-cert-auth",
                    "--listen-metrics-urls",
                    healthBase()));
        }
        cmd.addAll(extraArgs);
        return cmd;
    }

    /** The inherited environment without {@code ETCD_*} variables, which would override flags. */
    private static Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        System.getenv().keySet().stream().filter(k -> k.startsWith("ETCD_")).forEach(k -> env.put(k, null));
        return env;
    }

    private static String toGoDuration(Duration d) {
        return d.toMillis() + "ms";
    }

    private static String resolveExecutable(String executable) {
        if (executable.contains(File.separator)) {
            if (Files.isExecutable(Path.of(executable))) {
                return executable;
            }
            throw new IllegalStateException("etcd binary " + executable + " is not an executable file"
                    + " (expected: the etcd server binary, e.g. /usr/bin/etcd from the Debian package etcd-server)");
        }
        String path = Objects.requireNonNullElse(System.getenv("PATH"), "");
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, executable))) {
                return Path.of(dir, executable).toString();
            }
        }
        throw new IllegalStateException("'" + executable + "' not found on PATH (" + path + "): install the"
                + " Debian package etcd-server (apt-get install -y etcd-server; etcd 3.4.23 is tested) or give"
                + " its location with EtcdServer.builder().executable(\"/path/to/etcd\")");
    }

    private void awaitHealthy() {
        long deadline = System.nanoTime() + startTimeout.toNanos();
        HttpRequest request = HttpRequest.newBuilder(URI.create(healthBase() + "/health"))
                .timeout(Duration.ofSeconds(2))
                .GET()
                .build();
        String lastAnswer = "no answer";
        while (true) {
            if (!process.isAlive()) {
                failed = true;
                throw new IllegalStateException(
                        "etcd exited with code " + process.exitCode().orElse(-1)
                                + " while starting (client port " + clientPort + ", peer port " + peerPort + "); log "
                                + logFile + ", last lines:\n" + process.logTail(40));
            }
            try {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200
                        && response.body().replace(" ", "").contains("\"health\":\"true\"")) {
                    return;
                }
                lastAnswer = "HTTP " + response.statusCode() + " " + response.body();
            } catch (IOException e) {
                lastAnswer = e.toString();
            } catch (InterruptedException e) {
                throw ManagedProcess.interrupted("waiting for etcd to become healthy", e);
            }
            if (System.nanoTime() >= deadline) {
                failed = true;
                throw new IllegalStateException("etcd at " + clientUrl() + " not healthy within "
                        + startTimeout.toMillis() + " ms (last /health answer: " + lastAnswer + "); log "
                        + logFile + ", last lines:\n" + process.logTail(40));
            }
            ManagedProcess.sleep(50);
        }
    }

    /** Where {@code /health} is served: the client URL, or with TLS the plain metrics URL. */
    private String healthBase() {
        return pki == null ? clientUrl() : "http://127.0.0.1:" + metricsPort;
    }

    /**
     * Creates the users and roles and enables authentication (first start only: etcd keeps them
     * in its data), as {@code etcdctl user add root; etcdctl auth enable} does: the root user
     * with the root role, then one role per {@link Builder#user}.
     */
    private void enableAuth() {
        try (Client client = clientBuilder().build()) {
            Auth auth = client.getAuthClient();
            await(auth.roleAdd(bs("root")));
            await(auth.userAdd(bs("root"), bs(rootPassword)));
            await(auth.userGrantRole(bs("root"), bs("root")));
            for (User u : users) {
                ByteSequence key = u.keyPrefix().isEmpty() ? bs("\0") : bs(u.keyPrefix());
                ByteSequence end = u.keyPrefix().isEmpty() ? bs("\0") : OptionsUtil.prefixEndOf(key);
                await(auth.roleAdd(bs(u.name())));
                await(auth.roleGrantPermission(bs(u.name()), key, end, u.permission()));
                await(auth.userAdd(bs(u.name()), bs(u.password())));
                await(auth.userGrantRole(bs(u.name()), bs(u.name())));
            }
            await(auth.authEnable());
        }
        LOG.info(
                "etcd at {}: authentication enabled, users root{}",
                clientUrl(),
                users.stream().map(u -> ", " + u.name()).reduce("", String::concat));
    }

    private void await(CompletableFuture<?> f) {
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            failed = true;
            throw new IllegalStateException(
                    "enabling authentication on etcd at " + clientUrl() + " failed: " + e + "; log " + logFile
                            + ", last lines:\n" + process.logTail(20),
                    e);
        } catch (InterruptedException e) {
            throw ManagedProcess.interrupted("enabling etcd authentication", e);
        }
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /**
     * A jetcd client builder for this server: its endpoint and, with TLS, its CA and the testkit's
     * client certificate ({@link #clientCert()}). Add {@code .user(...).password(...)} once
     * authentication is on.
     *
     * @return a new builder
     * @throws IllegalStateException if the PEM files cannot be read
     */
    public ClientBuilder clientBuilder() {
        ClientBuilder b = Client.builder().endpoints(clientUrl());
        if (pki != null) {
            try {
                b.sslContext(ssl -> ssl.trustManager(pki.caCert().toFile())
                        .keyManager(clientCert.cert().toFile(), clientCert.key().toFile()));
            } catch (SSLException e) {
                throw new IllegalStateException("cannot use the TLS files of etcd at " + clientUrl(), e);
            }
        }
        return b;
    }

    /**
     * The client URL, for jetcd's {@code Client.builder().endpoints(...)} and the HTTP/JSON
     * gateway ({@code POST <url>/v3/kv/put}).
     *
     * @return {@code http://127.0.0.1:<clientPort>}, or {@code https://} with {@link Builder#tls};
     *     stable across restarts
     */
    public String clientUrl() {
        return (pki == null ? "http" : "https") + "://127.0.0.1:" + clientPort;
    }

    /**
     * The CA that signs etcd's certificate (what {@code --etcd-cacert} takes).
     *
     * @return the PEM file
     * @throws IllegalStateException without {@link Builder#tls}
     */
    public Path caCert() {
        return requireTls().caCert();
    }

    /**
     * A client certificate etcd accepts ({@code CN=watchfanout-testkit}, no etcd user of that
     * name: with authentication on, a call needs a user's token as well), for
     * {@code --etcd-cert}/{@code --etcd-key}.
     *
     * @return the PEM certificate and PKCS#8 key
     * @throws IllegalStateException without {@link Builder#tls}
     */
    public Pki.Issued clientCert() {
        requireTls();
        return clientCert;
    }

    private Pki requireTls() {
        if (pki == null) {
            throw new IllegalStateException("etcd at " + clientUrl() + " has no TLS (EtcdServer.builder().tls(pki))");
        }
        return pki;
    }

    /**
     * The loopback TCP port etcd serves clients on (gRPC, {@code /v3/} JSON gateway, {@code /health}).
     *
     * @return the port; stable across restarts
     */
    public int clientPort() {
        return clientPort;
    }

    /**
     * The loopback TCP port of etcd's peer (Raft) listener.
     *
     * @return the port; stable across restarts
     */
    public int peerPort() {
        return peerPort;
    }

    /**
     * The configured {@code --experimental-watch-progress-notify-interval}.
     *
     * @return the interval
     */
    public Duration progressNotifyInterval() {
        return progressNotifyInterval;
    }

    /**
     * The configured {@code --max-request-bytes}.
     *
     * @return the limit in bytes
     */
    public long maxRequestBytes() {
        return maxRequestBytes;
    }

    @Override
    String address() {
        return clientUrl();
    }

    /**
     * Settings of an {@link EtcdServer}. Not thread-safe; each setter returns this builder.
     */
    public static final class Builder extends LifecycleBuilder<Builder> {
        private String executable = "etcd";
        private Duration progressNotifyInterval = DEFAULT_PROGRESS_NOTIFY_INTERVAL;
        private long maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private long quotaBackendBytes = DEFAULT_QUOTA_BACKEND_BYTES;
        private final List<String> extraArgs = new ArrayList<>();
        private int clientPort;
        private int peerPort;
        private Pki pki;
        private String rootPassword;
        private final List<User> users = new ArrayList<>();

        private Builder() {
            super(Duration.ofSeconds(30), Duration.ofSeconds(30));
        }

        /**
         * A fixed client port (e.g. 2379 for a local stack); default 0: a free port.
         *
         * @param port 0 or a TCP port, bound on 127.0.0.1
         * @return this builder
         * @throws IllegalArgumentException if outside [0, 65535]
         */
        public Builder clientPort(int port) {
            this.clientPort = requirePort(port, "clientPort");
            return this;
        }

        /**
         * A fixed peer port (e.g. 2380 for a local stack); default 0: a free port.
         *
         * @param port 0 or a TCP port, bound on 127.0.0.1
         * @return this builder
         * @throws IllegalArgumentException if outside [0, 65535]
         */
        public Builder peerPort(int port) {
            this.peerPort = requirePort(port, "peerPort");
            return this;
        }

        /**
         * The etcd binary: a name looked up on {@code PATH} (default {@code etcd}) or a path.
         *
         * @param executable the name or path
         * @return this builder
         */
        public Builder executable(String executable) {
            this.executable = Objects.requireNonNull(executable, "executable");
            return this;
        }

        /**
         * {@code --experimental-watch-progress-notify-interval}; default 1 s.
         *
         * @param interval a positive duration, whole milliseconds
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder progressNotifyInterval(Duration interval) {
            if (interval.isNegative() || interval.toMillis() < 1) {
                throw new IllegalArgumentException("progressNotifyInterval: " + interval + " (expected: >= 1ms)");
            }
            this.progressNotifyInterval = interval;
            return this;
        }

        /**
         * {@code --max-request-bytes}; default 10 MiB.
         *
         * @param bytes the largest request etcd accepts, in bytes
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxRequestBytes(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxRequestBytes: " + bytes + " (expected: >= 1)");
            }
            this.maxRequestBytes = bytes;
            return this;
        }

        /**
         * {@code --quota-backend-bytes}; default 4 GiB.
         *
         * @param bytes the backend size limit in bytes
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder quotaBackendBytes(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("quotaBackendBytes: " + bytes + " (expected: >= 1)");
            }
            this.quotaBackendBytes = bytes;
            return this;
        }

        /**
         * An extra command-line argument for etcd, appended after the testkit's own flags.
         *
         * @param arg e.g. {@code --auto-compaction-retention=1}
         * @return this builder
         */
        public Builder extraArg(String arg) {
            this.extraArgs.add(Objects.requireNonNull(arg, "arg"));
            return this;
        }

        /**
         * Serves clients on {@code https} only, with a server certificate of {@code pki} (for
         * {@code localhost} and the loopback addresses), and requires a client certificate
         * signed by its CA ({@code --cert-file}, {@code --key-file}, {@code --trusted-ca-file},
         * {@code --client-cert-auth}). {@code /health} and {@code /metrics} move to a plain
         * HTTP port of their own ({@code --listen-metrics-urls}); the peer URL stays plain.
         *
         * @param pki the CA; etcd's certificate and a client certificate are issued into its directory
         * @return this builder
         */
        public Builder tls(Pki pki) {
            this.pki = Objects.requireNonNull(pki, "pki");
            return this;
        }

        /**
         * Enables authentication on the first start: user {@code root} (role {@code root}) with
         * this password, then the {@link #user}s, then {@code auth enable}.
         *
         * @param password root's password
         * @return this builder
         */
        public Builder rootPassword(String password) {
            this.rootPassword = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * A user created before authentication is enabled, with a role of the same name holding one
         * permission on a key prefix; needs {@link #rootPassword}.
         *
         * @param name user and role name
         * @param password its password
         * @param permission {@code READ}, {@code WRITE} or {@code READWRITE}
         * @param keyPrefix the keys it may use; empty for every key
         * @return this builder
         */
        public Builder user(String name, String password, Permission.Type permission, String keyPrefix) {
            users.add(new User(
                    Objects.requireNonNull(name, "name"),
                    Objects.requireNonNull(password, "password"),
                    Objects.requireNonNull(permission, "permission"),
                    Objects.requireNonNull(keyPrefix, "keyPrefix")));
            return this;
        }

        /**
         * Creates the server (picks its ports; does not start it).
         *
         * @return a new server
         */
        public EtcdServer build() {
            return new EtcdServer(this);
        }
    }
}
