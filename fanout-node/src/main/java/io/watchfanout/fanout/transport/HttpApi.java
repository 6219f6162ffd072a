package io.watchfanout.fanout.transport;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import io.undertow.UndertowOptions;
import io.undertow.protocols.ssl.UndertowXnioSsl;
import io.undertow.server.DefaultByteBufferPool;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.server.protocol.http.HttpOpenListener;
import io.undertow.util.AttachmentKey;
import io.undertow.util.Methods;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.fanout.watch.WatchCore;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.ChannelListener;
import org.xnio.ChannelListeners;
import org.xnio.IoUtils;
import org.xnio.OptionMap;
import org.xnio.Options;
import org.xnio.StreamConnection;
import org.xnio.Xnio;
import org.xnio.XnioWorker;
import org.xnio.channels.AcceptingChannel;
import org.xnio.conduits.ConduitStreamSinkChannel;
import org.xnio.conduits.ConduitStreamSourceChannel;

/**
 * The fan-out node's HTTP server (Undertow): {@code /readyz}, {@code /livez}, {@code /metrics},
 * and the paths front ends {@link #mount} (the node's own API's {@code /v1}; the Kubernetes API's
 * {@code /api}, {@code /apis}, {@code /version}; etcd's JSON gateway's {@code /v3}); any other
 * path is a 404 {@code Status}. Their watches are streamed by this port's {@link WatchStreams}.
 * Pages of the origins given to {@link #allowOrigins} may read {@code /v1/*} and {@code /v3/*}
 * across origins ({@link CorsHandler}).
 *
 * <p>The listener is assembled from Undertow's parts (an XNIO worker, an
 * {@link HttpOpenListener}) as {@code Undertow.start()} does, with one difference: each
 * accepted connection's read side first gets a {@link RequestTargetGuard}, so that a request
 * target Undertow's parser would refuse with a bare 400 (a bad percent-escape such as
 * {@code key=%zz}, a raw {@code ^}) is answered with a JSON {@code Status} instead; and its
 * write side a {@link ParserRefusalBody}, which gives the 400 of a request Undertow's parser
 * cannot read at all (a malformed request line or header), and the bodiless 400 of Undertow's
 * {@code Host} check, a {@code Status} body too. URL
 * decoding is off: the query is decoded to raw bytes by {@link QueryParams}. Accepted
 * connections have TCP keepalive on with the settings' timings ({@link TcpKeepalive}), so a
 * client that vanished without a FIN is noticed on an idle watch too; one that vanished while a
 * few bytes were in flight to it is found by the {@link UnacknowledgedSweeper}.
 *
 * <p>With {@link #serveTls} each accepted TCP connection is wrapped in TLS (HTTP/1.1; XNIO's
 * {@code SslConnection} of Undertow's {@link UndertowXnioSsl}) after its keepalive timings are
 * set on the socket; the guard and Undertow then read the decrypted side. The certificate is
 * {@link ServerTls}'s, reloaded from disk for new handshakes.
 *
 * <p>Access (README.md, "Security"): each front end authenticates and authorizes its requests and
 * watches itself, with the request's credentials ({@link HttpAccess}), which this server reads
 * against its TLS material; {@code /readyz}, {@code /livez} and {@code /metrics} stay open, for
 * probes and scrapers, and show no key or value. Request headers are bounded
 * ({@link #MAX_HEADER_BYTES}; Undertow refuses more with its own 400, given a {@code Status} body
 * by {@link ParserRefusalBody}, and closes the connection).
 *
 * <p>Thread-safety: {@link #start()} and {@link #stop()} from one controlling thread;
 * {@link #stopAccepting()} from any thread.
 */
public final class HttpApi {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
    /** The most bytes of a request's headers: room for a large JWT, not for a flood. */
    static final int MAX_HEADER_BYTES = 64 * 1024;

    /**
     * A request refused before its front end saw it (a target Undertow's parser refuses, path
     * parameters), handed to the front end mounted at the request's path as this attachment, so
     * that it answers in its own error format; the exchange's path is then not the request's.
     */
    public static final AttachmentKey<ApiException> REFUSED_REQUEST = AttachmentKey.create(ApiException.class);

    private final WatchCore core;
    private final HttpSettings settings;
    private final CollectorRegistry registry;
    private final String bindAddress;
    private final int requestedPort;
    private final int ioThreads;
    private XnioWorker worker;
    private HttpOpenListener openListener;
    private AcceptingChannel<StreamConnection> server;
    private UnacknowledgedSweeper sweeper;
    /** The watch streams of every front end on this port; their sweeper is the one {@link #start} makes. */
    private final WatchStreams streams;

    private int port;
    private CorsOrigins corsOrigins = CorsOrigins.NONE;
    private ServerTls tls;
    /** Front ends' handlers by path prefix ({@link #mount}), in the order mounted. */
    private final Map<String, HttpHandler> mounts = new LinkedHashMap<>();

    /**
     * @param core the watch core to serve
     * @param settings API settings
     * @param registry the metrics served at {@code /metrics}
     * @param bindAddress the address to listen on, e.g. {@code 127.0.0.1}
     * @param port the port, 0 for a free one
     */
    public HttpApi(WatchCore core, HttpSettings settings, CollectorRegistry registry, String bindAddress, int port) {
        this(
                core,
                settings,
                registry,
                bindAddress,
                port,
                Math.max(2, Runtime.getRuntime().availableProcessors()));
    }

    /** As the public constructor, with {@code ioThreads} IO threads (Undertow's default: cores, at least 2). */
    HttpApi(
            WatchCore core,
            HttpSettings settings,
            CollectorRegistry registry,
            String bindAddress,
            int port,
            int ioThreads) {
        this.core = core;
        this.settings = settings;
        this.registry = registry;
        this.bindAddress = bindAddress;
        this.requestedPort = port;
        this.ioThreads = ioThreads;
        this.streams = new WatchStreams(core, settings, () -> sweeper);
    }

    /** This port's settings, which the front ends mounted on it share. */
    public HttpSettings settings() {
        return settings;
    }

    /**
     * The watch streams of this port, for a front end mounted on it ({@link #mount}): it opens its
     * watches through them, and they are written, timed out and closed alike.
     */
    public WatchStreams watchStreams() {
        return streams;
    }

    /**
     * Lets pages of {@code origins} read {@code /v1/*} and {@code /v3/*} across origins
     * ({@link CorsHandler}; README.md, "Browsers"); call before {@link #start()}. Without it no
     * origin may, and preflights are refused with 403.
     */
    public void allowOrigins(CorsOrigins origins) {
        this.corsOrigins = Objects.requireNonNull(origins, "origins");
    }

    /**
     * Serves HTTPS with {@code tls}'s certificate (and, when it has client CAs, only to clients
     * with a certificate they signed); call before {@link #start()}. Without it, plaintext HTTP.
     */
    public void serveTls(ServerTls tls) {
        this.tls = Objects.requireNonNull(tls, "tls");
    }

    /**
     * Serves every request whose path is {@code pathPrefix} or lies below it ({@code /api} takes
     * {@code /api} and {@code /api/v1/pods}, not {@code /apis}) with {@code handler}, ahead of the
     * node's own routes; call before {@link #start()}. A front end plugs its routes into the HTTP
     * transport this way without the transport knowing it (the node's own {@code /v1} too). The
     * handler is called on an IO thread,
     * after CORS and the path-parameter check; it answers everything itself (methods, readiness,
     * access).
     *
     * @param pathPrefix an absolute path without a trailing slash, e.g. {@code /apis}
     * @throws IllegalArgumentException for a prefix that is not such a path, one mounted already, or
     *     one that overlaps the server's own paths or another mounted prefix
     * @throws IllegalStateException after {@link #start()}
     */
    public void mount(String pathPrefix, HttpHandler handler) {
        Objects.requireNonNull(handler, "handler");
        if (openListener != null) {
            throw new IllegalStateException("mount " + pathPrefix + " after start (expected: before start)");
        }
        if (!pathPrefix.startsWith("/") || pathPrefix.endsWith("/") || pathPrefix.contains("//")) {
            throw new IllegalArgumentException(
                    "path prefix \"" + pathPrefix + "\" (expected: an absolute path without a trailing slash)");
        }
        if (mounts.containsKey(pathPrefix)) {
            throw new IllegalArgumentException("path prefix " + pathPrefix + " is mounted already");
        }
        for (String own : new String[] {"/readyz", "/livez", "/metrics"}) {
            if (underPrefix(own, pathPrefix) || underPrefix(pathPrefix, own)) {
                throw new IllegalArgumentException(
                        "path prefix " + pathPrefix + " overlaps the node's own " + own + " (expected: another path)");
            }
        }
        for (String mounted : mounts.keySet()) {
            if (underPrefix(mounted, pathPrefix) || underPrefix(pathPrefix, mounted)) {
                throw new IllegalArgumentException("path prefix " + pathPrefix + " overlaps " + mounted
                        + ", mounted already (expected: another path)");
            }
        }
        mounts.put(pathPrefix, handler);
    }

    /**
     * Answers a refused request: in the error format of the front end mounted at {@code path}
     * (through {@link #REFUSED_REQUEST}), else as a plain {@code Status}.
     */
    private void refuse(HttpServerExchange exchange, String path, ApiException refusal) throws Exception {
        if (path != null) {
            for (Map.Entry<String, HttpHandler> mount : mounts.entrySet()) {
                if (underPrefix(path, mount.getKey())) {
                    exchange.putAttachment(REFUSED_REQUEST, refusal);
                    mount.getValue().handleRequest(exchange);
                    return;
                }
            }
        }
        Responses.error(exchange, refusal);
    }

    /** Whether {@code path} is {@code prefix} or lies below it, segment by segment. */
    static boolean underPrefix(String path, String prefix) {
        return path.startsWith(prefix) && (path.length() == prefix.length() || path.charAt(prefix.length()) == '/');
    }

    /**
     * Starts listening; {@link #port()} tells where.
     *
     * @throws CannotListenException if the address cannot be bound
     */
    public void start() {
        sweeper = new UnacknowledgedSweeper(settings.writeTimeout(), settings.nodeId());
        HttpHandler root = new CorsHandler(this::route, corsOrigins);
        // Undertow.start()'s worker, socket and buffer settings, for a heap of 128 MiB or more.
        worker = createWorker(
                OptionMap.builder()
                        .set(Options.WORKER_NAME, "watchfanout-http-" + settings.nodeId())
                        .set(Options.WORKER_IO_THREADS, ioThreads)
                        .set(Options.WORKER_TASK_CORE_THREADS, ioThreads * 8)
                        .set(Options.WORKER_TASK_MAX_THREADS, ioThreads * 8)
                        .set(Options.CONNECTION_HIGH_WATER, 1_000_000)
                        .set(Options.CONNECTION_LOW_WATER, 1_000_000)
                        .set(Options.TCP_NODELAY, true)
                        .set(Options.CORK, true)
                        .getMap(),
                "watchfanout-http-" + settings.nodeId());
        OptionMap undertowOptions = OptionMap.builder()
                .set(UndertowOptions.NO_REQUEST_TIMEOUT, -1)
                // We decode the query ourselves, to raw bytes (etcd keys are not text).
                .set(UndertowOptions.DECODE_URL, false)
                .set(UndertowOptions.MAX_HEADER_SIZE, MAX_HEADER_BYTES)
                .getMap();
        openListener = new HttpOpenListener(new DefaultByteBufferPool(true, 16 * 1024 - 20, -1, 4), undertowOptions);
        openListener.setRootHandler(root);
        TcpKeepalive keepalive = settings.tcpKeepalive();
        UndertowXnioSsl ssl =
                tls == null ? null : new UndertowXnioSsl(worker.getXnio(), OptionMap.EMPTY, tls.sslContext());
        ChannelListener<StreamConnection> guarded = accepted -> {
            // On the TCP socket itself: a TLS connection does not expose it.
            keepalive.applyTo(accepted);
            StreamConnection connection = ssl == null ? accepted : tlsOver(ssl, accepted);
            ConduitStreamSourceChannel source = connection.getSourceChannel();
            source.setConduit(new RequestTargetGuard(source.getConduit()));
            ConduitStreamSinkChannel sink = connection.getSinkChannel();
            sink.setConduit(new ParserRefusalBody(sink.getConduit()));
            openListener.handleEvent(connection);
        };
        OptionMap socketOptions = OptionMap.builder()
                .set(Options.WORKER_IO_THREADS, ioThreads)
                .set(Options.TCP_NODELAY, true)
                // SO_KEEPALIVE on every accepted socket; the timings are set per connection above.
                .set(Options.KEEP_ALIVE, true)
                .set(Options.REUSE_ADDRESSES, true)
                .set(Options.BALANCING_TOKENS, 1)
                .set(Options.BALANCING_CONNECTIONS, 2)
                .set(Options.BACKLOG, 1000)
                .getMap();
        try {
            server = worker.createStreamConnectionServer(
                    new InetSocketAddress(InetAddress.getByName(bindAddress), requestedPort),
                    ChannelListeners.openListenerAdapter(guarded),
                    socketOptions);
        } catch (IOException e) {
            worker.shutdownNow();
            throw new CannotListenException(
                    "cannot listen on " + bindAddress + ":" + requestedPort + ": "
                            + Objects.requireNonNullElse(e.getMessage(), e.toString()),
                    e);
        }
        server.resumeAccepts();
        port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        boolean sweeping = sweeper.start(port);
        LOG.info(
                "[node {}] serving {} on {}:{} (CORS origins: {}; TCP keepalive {}s idle, {} probes {}s apart; "
                        + "write timeout {} ms{})",
                settings.nodeId(),
                tls == null ? "HTTP" : "HTTPS, " + tls + ",",
                bindAddress,
                port,
                corsOrigins,
                keepalive.idle().getSeconds(),
                keepalive.count(),
                keepalive.interval().getSeconds(),
                settings.writeTimeout().toMillis(),
                sweeping
                        ? ", also for bytes unacknowledged, checked every "
                                + sweeper.interval().toMillis() + " ms"
                        : "");
    }

    /** {@code accepted} as a server-side TLS connection whose handshake starts with the first read. */
    private StreamConnection tlsOver(UndertowXnioSsl ssl, StreamConnection accepted) {
        org.xnio.ssl.SslConnection connection = ssl.wrapExistingConnection(accepted, OptionMap.EMPTY, false);
        tls.configure(UndertowXnioSsl.getSslEngine(connection));
        return connection;
    }

    /** The HTTP address cannot be bound: the port is taken, or the address is not one of this host. */
    public static final class CannotListenException extends UncheckedIOException {
        private static final long serialVersionUID = 1L;

        CannotListenException(String message, IOException cause) {
            super(message, cause);
        }
    }

    private static XnioWorker createWorker(OptionMap options, String name) {
        try {
            return Xnio.getInstance(HttpApi.class.getClassLoader()).createWorker(options);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the HTTP worker " + name, e);
        }
    }

    /** The port listened on (after {@link #start()}). */
    public int port() {
        return port;
    }

    /** New watches and lists get 503 from now on (shutdown drain); readiness fails. */
    public void stopAccepting() {
        core.readiness().drain();
    }

    /** Stops the server and closes every connection. */
    public void stop() {
        if (server == null) {
            return;
        }
        IoUtils.safeClose(server);
        sweeper.stop();
        openListener.closeConnections();
        worker.shutdownNow();
        try {
            if (!worker.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("[node {}] HTTP worker threads did not stop within 10 s", settings.nodeId());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server = null;
    }

    /** The sweeper of unacknowledged connections (tests). */
    UnacknowledgedSweeper sweeper() {
        return sweeper;
    }

    /** The IO threads' worker (tests hold an IO thread to make frames wait). */
    XnioWorker worker() {
        return worker;
    }

    private void route(HttpServerExchange exchange) throws Exception {
        if (tls != null) {
            exchange.putAttachment(HttpAccess.SERVER_TLS, tls);
        }
        String path = exchange.getRequestPath();
        boolean get = exchange.getRequestMethod().equals(Methods.GET)
                || exchange.getRequestMethod().equals(Methods.HEAD);
        if (!exchange.getPathParameters().isEmpty()) {
            // Undertow strips ";name=value" from the path; served silently, "/v1/kv;x=1" would look like
            // an accepted parameter. No path of this API takes any.
            refuse(
                    exchange,
                    path,
                    new ApiException(HttpStatuses.badRequest("path parameters in " + exchange.getRequestURI()
                            + " (expected: none; parameters go in the query string)")));
            return;
        }
        if (path.equals(RequestTargetRewriter.INVALID_TARGET_PATH)) {
            String query = exchange.getQueryString();
            refuse(exchange, InvalidTargetHandler.originalPath(query), InvalidTargetHandler.explain(query));
            return;
        }
        for (Map.Entry<String, HttpHandler> mount : mounts.entrySet()) {
            if (underPrefix(path, mount.getKey())) {
                mount.getValue().handleRequest(exchange);
                return;
            }
        }
        switch (path) {
            case "/readyz":
                if (!get) {
                    break;
                }
                String notReady = core.readiness().notReady();
                if (notReady == null) {
                    Responses.ok(exchange, "text/plain", "ok\n".getBytes(StandardCharsets.UTF_8));
                } else {
                    exchange.setStatusCode(503);
                    exchange.getResponseSender().send("not ready: " + notReady + "\n");
                }
                return;
            case "/livez":
                if (!get) {
                    break;
                }
                Responses.ok(exchange, "text/plain", "ok\n".getBytes(StandardCharsets.UTF_8));
                return;
            case "/metrics":
                if (!get) {
                    break;
                }
                if (exchange.isInIoThread()) {
                    exchange.dispatch(ex -> Responses.ok(ex, TextFormat.CONTENT_TYPE_004, metricsText()));
                } else {
                    Responses.ok(exchange, TextFormat.CONTENT_TYPE_004, metricsText());
                }
                return;
            default:
                Responses.noSuchPath(exchange, path);
                return;
        }
        Responses.status(
                exchange,
                HttpStatuses.methodNotAllowed(exchange.getRequestMethod() + " " + path + " (expected: GET)"),
                0);
    }

    private byte[] metricsText() {
        StringWriter w = new StringWriter();
        try {
            TextFormat.write004(w, registry.metricFamilySamples());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString().getBytes(StandardCharsets.UTF_8);
    }
}
