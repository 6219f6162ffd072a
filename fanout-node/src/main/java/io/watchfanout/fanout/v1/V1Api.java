package io.watchfanout.fanout.v1;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Methods;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpAccess;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.HttpStatuses;
import io.watchfanout.fanout.transport.Responses;
import io.watchfanout.fanout.watch.CurrentRevision;
import io.watchfanout.fanout.watch.Statuses;
import io.watchfanout.fanout.watch.WatchCore;
import java.util.Objects;

/**
 * The node's own API (README.md, "The watch protocol"), mounted at {@code /v1} on the HTTP port:
 * {@code GET /v1/watch} ({@link WatchHandler}) and {@code GET /v1/kv} ({@link KvHandler}); any
 * other method is a 405, any other path below {@code /v1} a 404, and while the node drains both
 * get 503 (a watch's as {@link WatchHandler} refuses, which an event stream can read).
 *
 * <p>Access (README.md, "Security"): every request and watch is authenticated and authorized
 * when it starts, with the node's {@link AccessControl} ({@link HttpAccess}).
 *
 * <p>Thread-safety: mount once, before the port starts; requests are served on IO threads.
 */
public final class V1Api implements HttpHandler {
    /** Where it is mounted. */
    public static final String PATH_PREFIX = "/v1";
    /** The audit name of {@code GET /v1/kv}. */
    static final String LIST_API = "http-list";

    private final WatchCore core;
    private final HttpSettings settings;
    private final HttpAccess access;
    private final CurrentRevision currentRevision;
    private WatchHandler watch;
    private KvHandler kv;

    /**
     * The API over {@code core}.
     *
     * @param settings the HTTP port's settings (waits, {@code Retry-After}, node id)
     * @param access who may read what; {@link AccessControl#open} for anyone
     * @param currentRevision where {@code GET /v1/kv} without {@code resourceVersion} learns etcd's
     *     revision, making it a consistent read (Kubernetes: absent means most recent), or null:
     *     then such a list is answered at the node's revision
     */
    public V1Api(WatchCore core, HttpSettings settings, AccessControl access, CurrentRevision currentRevision) {
        this.core = core;
        this.settings = settings;
        this.access = new HttpAccess(Objects.requireNonNull(access, "access"));
        this.currentRevision = currentRevision;
    }

    /**
     * Serves {@link #PATH_PREFIX} on {@code http}, watches through its watch streams; call before
     * it starts, once.
     */
    public void mountOn(HttpApi http) {
        watch = new WatchHandler(core, settings, http.watchStreams(), access);
        kv = new KvHandler(core, settings, currentRevision, access);
        http.mount(PATH_PREFIX, this);
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) throws Exception {
        ApiException refused = exchange.getAttachment(HttpApi.REFUSED_REQUEST);
        if (refused != null) {
            Responses.error(exchange, refused);
            return;
        }
        String path = exchange.getRequestPath();
        if (!path.equals("/v1/watch") && !path.equals("/v1/kv")) {
            Responses.noSuchPath(exchange, path);
        } else if (!exchange.getRequestMethod().equals(Methods.GET)) {
            Responses.status(
                    exchange,
                    HttpStatuses.methodNotAllowed(exchange.getRequestMethod() + " " + path + " (expected: GET)"),
                    0);
        } else if (core.readiness().isDraining() && path.equals("/v1/watch")) {
            // An event stream gets its 503 as an ERROR frame a page can read (WatchHandler).
            watch.refuse(
                    exchange,
                    new ApiException(
                            Statuses.notReady("this node is shutting down; ask another node"),
                            settings.retryAfterSeconds()));
        } else if (core.readiness().isDraining()) {
            Responses.status(
                    exchange,
                    Statuses.notReady("this node is shutting down; ask another node"),
                    settings.retryAfterSeconds());
        } else if (path.equals("/v1/watch")) {
            watch.handleRequest(exchange);
        } else {
            kv.handleRequest(exchange);
        }
    }

    /** The audit name of a watch in {@code encoding}: {@code http-json}, {@code http-protobuf}, {@code http-sse}. */
    static String watchApi(Encoding encoding) {
        return "http-" + encoding.name();
    }

    /** @throws ApiException 503 NotReady while rebuilding, after the cache failed, or while shutting down */
    static void checkServing(WatchCore core) throws ApiException {
        String notServing = core.readiness().notServing();
        if (notServing != null) {
            throw new ApiException(Statuses.notReady(notServing), 1);
        }
    }
}
