package io.watchfanout.fanout.gateway;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.undertow.util.Methods;
import io.watchfanout.fanout.etcd.EtcdApi;
import io.watchfanout.fanout.etcd.JsonGateway;
import io.watchfanout.fanout.frame.ProtoJson;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.transport.HttpAccess;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.watch.Readiness;
import io.watchfanout.fanout.watch.Statuses;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code POST /v3/...}: etcd's JSON gateway ({@link JsonGateway}) on the HTTP port. The request
 * body is read whole, the call goes to the node's etcd API, and the answer is written on the
 * exchange's IO thread as it comes ({@link GatewayResponse}: no thread of its own, however long a
 * stream waits; a client that hangs up has its call canceled at once). Not the path for fleets of
 * watchers (JSON printed per response and watcher): those use {@code /v1/watch} or the gRPC API,
 * whose frames are shared; at most {@link #MAX_WATCH_STREAMS} {@code /v3/watch} streams are open
 * at once, and one more gets 429 in the gateway's error shape.
 *
 * <p>Access (README.md, "Security"): the request is authenticated here, on the HTTP
 * listener's methods, before its body is read (401 in the gateway's error shape;
 * {@code /v3/auth/authenticate} needs no credentials); the services judge the rest (403, 429).
 *
 * <p>Mounted under {@code /v3} on the HTTP listener ({@link #mountOn}, through the transport's
 * neutral {@link HttpApi#mount}): neither the HTTP transport nor the etcd API knows the other.
 * While the node drains, a request is answered 503 with a JSON {@code Status} and
 * {@code Retry-After}, as the node's own paths are.
 *
 * <p>Thread-safety: one exchange per call; the gateway's sink hands lines to the exchange's IO thread.
 */
public final class GatewayHandler implements HttpHandler {
    /** The path prefix the gateway is served under: etcd's {@code /v3/...}. */
    public static final String PATH_PREFIX = "/v3";

    /**
     * The largest request body the gateway reads: the largest gRPC request of the etcd API in JSON
     * (base64 makes values 4/3 as long); etcd's own limit judges what it forwards.
     */
    static final int MAX_BODY_BYTES = EtcdApi.MAX_REQUEST_BYTES / 3 * 4 + 64 * 1024;
    /**
     * The largest body of {@code /v3/watch} and {@code /v3/kv/range}, which the node serves from its
     * cache: keys and options only, never values.
     */
    static final int MAX_CACHED_BODY_BYTES = 1024 * 1024;

    /** Open {@code /v3/watch} streams at most: each prints its own JSON for every response. */
    static final int MAX_WATCH_STREAMS = 256;

    private final JsonGateway gateway;
    private final Readiness readiness;
    private final Duration writeTimeout;
    private final int retryAfterSeconds;
    private final AtomicInteger watchStreams = new AtomicInteger();

    /**
     * @param readiness the node's readiness: a draining node refuses new calls
     * @param writeTimeout how long an answer's waiting bytes may go without the socket taking one
     * @param retryAfterSeconds the {@code Retry-After} of the 503 while draining, {@code >= 1}
     */
    GatewayHandler(JsonGateway gateway, Readiness readiness, Duration writeTimeout, int retryAfterSeconds) {
        this.gateway = gateway;
        this.readiness = readiness;
        this.writeTimeout = writeTimeout;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    /**
     * Serves {@code gateway} under {@link #PATH_PREFIX} on {@code http} (README.md, "etcd's v3
     * API"); call before it starts, once. Without it those paths answer the listener's 404.
     *
     * @param readiness the node's readiness ({@code WatchCore.readiness()})
     * @param writeTimeout how long an answer's waiting bytes may go without the socket taking
     *     one (the listener's {@code --write-timeout})
     * @param retryAfterSeconds the {@code Retry-After} of the 503 while draining, {@code >= 1}
     * @throws IllegalStateException after {@code http} started
     */
    public static void mountOn(
            HttpApi http, JsonGateway gateway, Readiness readiness, Duration writeTimeout, int retryAfterSeconds) {
        http.mount(PATH_PREFIX, new GatewayHandler(gateway, readiness, writeTimeout, retryAfterSeconds));
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) {
        String path = exchange.getRequestPath();
        if (readiness.isDraining()) {
            draining(exchange);
            return;
        }
        if (!gateway.handles(path)) {
            // grpc-gateway's answer to a path it has no method for: NotFound.
            json(exchange, 404, JsonGateway.errorJson(5, "Not Found"));
            return;
        }
        if (!exchange.getRequestMethod().equals(Methods.POST)) {
            // grpc-gateway's answer to a wrong method: Unimplemented, with HTTP's own status.
            exchange.getResponseHeaders().put(Headers.ALLOW, "POST");
            json(exchange, 405, JsonGateway.errorJson(12, "Method Not Allowed"));
            return;
        }
        Identity identity;
        String authorization = exchange.getRequestHeaders().getFirst(Headers.AUTHORIZATION);
        try {
            Credentials presented = HttpAccess.credentials(exchange);
            identity = gateway.authenticate(path, presented.certificateCommonName(), presented.authorization());
        } catch (AuthenticationException e) {
            exchange.getResponseHeaders().put(Headers.WWW_AUTHENTICATE, HttpAccess.CHALLENGE);
            json(exchange, 401, JsonGateway.errorJson(16, e.getMessage()));
            return;
        }
        boolean watch = path.equals("/v3/watch");
        if (watch && watchStreams.incrementAndGet() > MAX_WATCH_STREAMS) {
            watchStreams.decrementAndGet();
            exchange.getResponseHeaders().put(Headers.RETRY_AFTER, "1");
            json(
                    exchange,
                    429,
                    JsonGateway.errorJson(
                            8,
                            "this node has its most /v3/watch streams open (" + MAX_WATCH_STREAMS
                                    + "); watch through /v1/watch or the etcd gRPC API, or another node"));
            return;
        }
        // Once, whichever notices the end first: the exchange completing, or its connection closing.
        AtomicBoolean released = new AtomicBoolean(!watch);
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                watchStreams.decrementAndGet();
            }
        };
        exchange.addExchangeCompleteListener((ex, next) -> {
            release.run();
            next.proceed();
        });
        int max = path.equals("/v3/watch") || path.equals("/v3/kv/range") ? MAX_CACHED_BODY_BYTES : MAX_BODY_BYTES;
        long declared = exchange.getRequestContentLength();
        if (declared > max) {
            tooLarge(exchange, declared + " bytes", max);
            return;
        }
        exchange.setMaxEntitySize(max);
        exchange.getRequestReceiver().setMaxBufferSize(max);
        exchange.getRequestReceiver()
                .receiveFullBytes(
                        (ex, body) -> {
                            // Dispatched (on this IO thread) so that the exchange stays open after
                            // this handler returns: the answer is written as the call's responses come.
                            ex.dispatch(io.undertow.util.SameThreadExecutor.INSTANCE, () -> {
                                GatewayResponse response = new GatewayResponse(ex, writeTimeout, release);
                                JsonGateway.Call call = gateway.call(path, body, identity, authorization, response);
                                response.start(call, gateway.streams(path));
                            });
                        },
                        (ex, e) -> {
                            if (e instanceof io.undertow.server.RequestTooBigException) {
                                tooLarge(ex, "more than " + max + " bytes", max);
                            } else {
                                json(
                                        ex,
                                        400,
                                        JsonGateway.errorJson(3, "cannot read the request body: " + e.getMessage()));
                            }
                        });
    }

    /** 413, in the gateway's error shape (grpc's ResourceExhausted). */
    private static void tooLarge(HttpServerExchange exchange, String size, int max) {
        json(
                exchange,
                413,
                JsonGateway.errorJson(8, "request body of " + size + " (expected: at most " + max + " bytes)"));
    }

    /** 503 with a JSON {@code Status} and {@code Retry-After}, as the listener's own paths answer while draining. */
    private void draining(HttpServerExchange exchange) {
        exchange.setStatusCode(503);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
        exchange.getResponseHeaders().put(Headers.RETRY_AFTER, Integer.toString(retryAfterSeconds));
        byte[] body = ProtoJson.toJson(Statuses.notReady("this node is shutting down; ask another node"));
        byte[] line = Arrays.copyOf(body, body.length + 1);
        line[body.length] = '\n';
        exchange.getResponseSender().send(ByteBuffer.wrap(line));
    }

    private static void json(HttpServerExchange exchange, int status, String body) {
        exchange.setStatusCode(status);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
        exchange.getResponseSender().send(body + "\n");
    }
}
