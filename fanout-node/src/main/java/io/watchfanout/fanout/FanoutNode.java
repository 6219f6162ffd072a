package io.watchfanout.fanout;

import io.grpc.ManagedChannel;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.fanout.etcd.EtcdApi;
import io.watchfanout.fanout.etcd.EtcdApiSettings;
import io.watchfanout.fanout.etcd.EtcdApis;
import io.watchfanout.fanout.etcd.EtcdCredentials;
import io.watchfanout.fanout.etcd.EtcdRevisionProbe;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.gateway.GatewayHandler;
import io.watchfanout.fanout.kafka.KafkaCacheLoader;
import io.watchfanout.fanout.kafka.KafkaHistory;
import io.watchfanout.fanout.kafka.RebuildProgress;
import io.watchfanout.fanout.kube.KubeApi;
import io.watchfanout.fanout.kube.KubeObjects;
import io.watchfanout.fanout.kube.KubeSettings;
import io.watchfanout.fanout.kube.authz.ServiceAccountTokens;
import io.watchfanout.fanout.metrics.NodeMetrics;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.EncryptionFile;
import io.watchfanout.fanout.security.FrontProxy;
import io.watchfanout.fanout.security.NodeSecurity;
import io.watchfanout.fanout.security.SecurityConfig;
import io.watchfanout.fanout.security.SecuritySetupException;
import io.watchfanout.fanout.transport.CorsOrigins;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.v1.V1Api;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fan-out node: the watch cache and core, the Kafka feed that rebuilds and tails it, and its
 * front ends over the core: the HTTP API ({@code /v1}), etcd's v3 API on its own port with
 * {@code --etcd-api-port} (and its JSON gateway on the HTTP port), each registering its encodings
 * and calling the core's one entry (docs/ARCHITECTURE.md, "Adding a front end"); and the security
 * every front end checks requests and watches against. {@link #start} starts it;
 * {@link #close()} drains and stops it.
 *
 * <p>Thread-safety: start and close from one controlling thread.
 */
public final class FanoutNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FanoutNode.class);
    /** How long a finished read of older history stays joinable for watchers resuming from the same revision. */
    private static final Duration OLDER_READ_LINGER = Duration.ofSeconds(10);
    /**
     * Retry-After of 503 (not ready, shutting down) and 504 (revision not reached) answers: the
     * feed usually catches up within a second, and a client should come back that soon rather
     * than at its own, often much longer, default.
     */
    private static final int RETRY_AFTER_SECONDS = 1;
    /**
     * How long closing waits for the etcd API's open calls after the drain: its watch streams
     * already had {@code --shutdown-drain}; this only lets the last responses leave.
     */
    private static final long ETCD_API_STOP_MILLIS = 1000;
    /** How often the drain checks whether every watch stream has gone; short, so that shutdown ends soon after the last. */
    private static final long DRAIN_POLL_MILLIS = 20;

    private final NodeConfig config;
    private final WatchCore core;
    private final HttpApi api;
    private final KafkaCacheLoader loader;
    /** etcd's v3 API, or null without --etcd-api-port. */
    private final EtcdApi etcdApi;

    private final ManagedChannel etcdChannel;
    /** Who may do what; checked when requests and watches start, never per event. */
    private final AccessControl access;
    /** Stops the reload of --encryption-provider-config. */
    private final AutoCloseable encryptionReload;
    /** kube-apiserver's objects as the Kubernetes API's security reads them. */
    private final KubeObjects kubeObjects;
    /** The events topic as history before the window, or null with --deep-read-max-readers 0. */
    private final KafkaHistory olderHistory;

    private boolean closed;

    private FanoutNode(NodeConfig config, BenchSettings bench) {
        this.config = config;
        // First: bad TLS files stop the start before anything is opened.
        SecurityConfig security = config.security().access();
        ServerTls tls = config.security().tls() == null
                ? null
                : ServerTls.load(config.security().tls());
        if (tls != null && security.acceptsClientsWithoutCertificates()) {
            // Clients with tokens, anonymous ones and health probes come without a certificate.
            tls = tls.withOptionalClientCertificates();
        }
        FrameEncoder encoder = new FrameEncoder();
        core = new WatchCore(
                new CoreSettings(
                        config.core().historyMaxEvents(),
                        config.core().historyMaxAge(),
                        System::currentTimeMillis,
                        config.core().watcherQueueFrames(),
                        config.core().bookmarkInterval(),
                        config.nodeId(),
                        bench.encodePerWatcher()),
                encoder);
        if (bench.encodePerWatcher()) {
            LOG.warn(
                    "[node {}] --bench-encode-per-watcher: frames are encoded once per watcher (benchmark only)",
                    config.nodeId());
        }
        RebuildProgress progress = new RebuildProgress();
        NodeConfig.Feed feed = config.feed();
        olderHistory = feed.deepReadMaxReaders() == 0
                ? null
                : new KafkaHistory(
                        feed.kafkaBootstrap(),
                        feed.kafkaSettings(),
                        feed.topicPrefix(),
                        config.nodeId(),
                        core.status()::historyStartRevision,
                        feed.deepReadMaxReaders(),
                        feed.deepReadMaxBytes(),
                        OLDER_READ_LINGER);
        if (olderHistory != null) {
            core.useOlderHistory(olderHistory);
        }
        CollectorRegistry registry = NodeMetrics.registry(core, progress, olderHistory);
        api = new HttpApi(
                core,
                new HttpSettings(
                        config.core().resourceVersionWait(),
                        RETRY_AFTER_SECONDS,
                        config.nodeId(),
                        config.http().stalledCloseAfter(),
                        config.http().writeTimeout(),
                        config.http().tcpKeepalive()),
                registry,
                config.http().bindAddress(),
                config.http().port());
        api.allowOrigins(CorsOrigins.of(config.http().corsAllowedOrigins()));
        if (tls != null) {
            SecurityConfig.RequestHeaders frontProxy = security.kubernetes().frontProxy();
            // kube-apiserver's handshake trusts the front proxy's CA too; only --client-ca-file's name users.
            api.serveTls(
                    frontProxy == null
                            ? tls
                            : tls.alsoTrusting(frontProxy.clientCaFile(), "--requestheader-client-ca-file"));
        }
        // Also without the etcd API: consistent reads, --authz=etcd and --etcd-user-auth need etcd.
        etcdChannel = config.etcd().endpoints().isEmpty()
                ? null
                : EtcdApis.channel(config.etcd().endpoints(), config.etcd().security());
        EtcdCredentials etcdCredentials = etcdChannel == null
                ? EtcdCredentials.none()
                : EtcdApis.credentials(etcdChannel, config.etcd().security());
        // kube-apiserver's objects in the cache: ServiceAccount tokens, RBAC and the Node authorizer read them.
        kubeObjects = new KubeObjects(core, config.kube().prefix(), config.nodeId());
        access = NodeSecurity.create(
                security,
                config.nodeId(),
                etcdChannel == null ? null : EtcdApis.asNode(etcdChannel, etcdCredentials),
                ServiceAccountTokens.reading(kubeObjects));
        access.register(registry);
        etcdApi = config.etcdApi().port() < 0
                ? null
                : EtcdApis.create(
                        core,
                        new EtcdApiSettings(
                                config.http().bindAddress(),
                                config.etcdApi().port(),
                                config.nodeId(),
                                config.etcdApi().progressNotifyInterval(),
                                config.core().resourceVersionWait()),
                        etcdChannel,
                        etcdCredentials,
                        registry,
                        access);
        if (etcdApi != null) {
            GatewayHandler.mountOn(
                    api, etcdApi.gateway(), core.readiness(), config.http().writeTimeout(), RETRY_AFTER_SECONDS);
            if (tls != null) {
                etcdApi.serveTls(tls);
            }
        }
        EtcdRevisionProbe revisionProbe = etcdChannel == null
                ? null
                : new EtcdRevisionProbe(
                        etcdChannel, etcdCredentials, config.core().resourceVersionWait());
        // The node's own API; its lists are consistent reads when etcd's revision can be learned.
        new V1Api(core, api.settings(), access, revisionProbe).mountOn(api);
        // The Kubernetes API's reads, on the HTTP port beside /v1 (README.md, "Kubernetes API").
        KubeApi kubeApi = new KubeApi(
                core,
                new KubeSettings(
                        config.kube().prefix(),
                        config.core().resourceVersionWait(),
                        RETRY_AFTER_SECONDS,
                        config.nodeId()),
                access,
                revisionProbe,
                registry);
        List<String> modes = security.kubernetes().authorizationModes();
        if (!modes.isEmpty()) {
            kubeApi.authorizeWith(modes, kubeObjects);
        }
        SecurityConfig.RequestHeaders proxy = security.kubernetes().frontProxy();
        if (proxy != null) {
            kubeApi.trustFrontProxy(frontProxy(proxy));
        }
        Path encryption = security.kubernetes().encryptionProviderConfig();
        encryptionReload = encryption == null ? () -> {} : kubeApi.decryptWith(encryptionFile(encryption));
        kubeApi.mountOn(api);
        loader = new KafkaCacheLoader(
                feed.kafkaBootstrap(),
                feed.kafkaSettings(),
                feed.topicPrefix(),
                core.feed(),
                progress,
                config.nodeId(),
                feed.maxFeedStaleness(),
                config.core().historyMaxEvents());
        if (olderHistory != null) {
            loader.indexInto(olderHistory);
        }
    }

    private static FrontProxy frontProxy(SecurityConfig.RequestHeaders flags) {
        try {
            return new FrontProxy(
                    flags.clientCaFile(), flags.allowedNames(), flags.usernameHeaders(), flags.groupHeaders());
        } catch (NoSuchFileException e) {
            throw new SecuritySetupException(
                    "--requestheader-client-ca-file: " + flags.clientCaFile() + ": no such file", e);
        } catch (IOException e) {
            throw new SecuritySetupException(String.valueOf(e.getMessage()), e);
        }
    }

    private static EncryptionFile encryptionFile(Path file) {
        try {
            return new EncryptionFile(file);
        } catch (NoSuchFileException e) {
            throw new SecuritySetupException("--encryption-provider-config: " + file + ": no such file", e);
        } catch (IOException e) {
            String message = String.valueOf(e.getMessage());
            throw new SecuritySetupException(
                    message.startsWith("--encryption-provider-config")
                            ? message
                            : "--encryption-provider-config: " + file + ": " + message,
                    e);
        }
    }

    /**
     * Starts the HTTP API (answering 503 until ready) and the rebuild from Kafka.
     *
     * @throws io.watchfanout.common.tls.TlsMaterialException if the TLS files cannot be used (the
     *     message names the flag), before anything is started
     * @throws HttpApi.CannotListenException if the HTTP address cannot be bound
     */
    public static FanoutNode start(NodeConfig config) {
        return start(config, BenchSettings.NONE);
    }

    /** As {@link #start(NodeConfig)}, with the knobs of a benchmark ({@link BenchSettings}). */
    static FanoutNode start(NodeConfig config, BenchSettings bench) {
        FanoutNode node = new FanoutNode(config, bench);
        node.access.start();
        node.core.start();
        node.api.start();
        if (node.etcdApi != null) {
            node.etcdApi.start();
        }
        if (node.olderHistory != null) {
            node.olderHistory.start();
        }
        node.loader.start();
        LOG.info(
                "[node {}] started: Kafka {} topics {}.events/{}.state, HTTP {}:{}{}",
                config.nodeId(),
                config.feed().kafkaBootstrap(),
                config.feed().topicPrefix(),
                config.feed().topicPrefix(),
                config.http().bindAddress(),
                node.api.port(),
                node.etcdApi == null ? "" : ", etcd API " + config.http().bindAddress() + ":" + node.etcdApi.port());
        SecurityConfig.Kubernetes kube = config.security().access().kubernetes();
        LOG.info(
                "[node {}] Kubernetes API of {}: authorization {}, front proxy {}, encryption at rest {}",
                config.nodeId(),
                config.kube().prefix(),
                kube.authorizationModes().isEmpty()
                        ? "by the key-range policy (no --authorization-mode)"
                        : String.join(",", kube.authorizationModes()),
                kube.frontProxy() == null
                        ? "none"
                        : "certificates of " + kube.frontProxy().clientCaFile(),
                kube.encryptionProviderConfig() == null
                        ? "not read (no --encryption-provider-config)"
                        : kube.encryptionProviderConfig());
        return node;
    }

    /** The HTTP port. */
    public int port() {
        return api.port();
    }

    /** The etcd API port, or -1 without {@code --etcd-api-port}. */
    public int etcdApiPort() {
        return etcdApi == null ? -1 : etcdApi.port();
    }

    /** The node's watch core. */
    public WatchCore core() {
        return core;
    }

    /**
     * Graceful stop (SIGTERM): readiness fails and new requests get 503, every open stream
     * gets a final BOOKMARK (when it allowed bookmarks) and its end, streams get up to the
     * drain time to take their last frames, then the server and the feed stop.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        api.stopAccepting();
        int streams = core.finishAll();
        LOG.info(
                "[node {}] shutting down: ended {} watch streams, draining up to {} ms",
                config.nodeId(),
                streams,
                config.core().shutdownDrain().toMillis());
        long deadline = System.nanoTime() + config.core().shutdownDrain().toNanos();
        try {
            while (core.status().watcherCount() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(DRAIN_POLL_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (core.status().watcherCount() > 0) {
            LOG.warn(
                    "[node {}] {} watch streams did not drain in time; closing them",
                    config.nodeId(),
                    core.status().watcherCount());
        }
        api.stop();
        if (etcdApi != null) {
            etcdApi.stop(ETCD_API_STOP_MILLIS);
        }
        if (etcdChannel != null) {
            etcdChannel.shutdownNow();
        }
        loader.close();
        core.close();
        kubeObjects.close();
        try {
            encryptionReload.close();
        } catch (Exception e) {
            LOG.warn(
                    "[node {}] stopping the reload of --encryption-provider-config: {}", config.nodeId(), e.toString());
        }
        access.close();
        if (olderHistory != null) {
            olderHistory.close();
        }
        LOG.info("[node {}] stopped", config.nodeId());
    }
}
