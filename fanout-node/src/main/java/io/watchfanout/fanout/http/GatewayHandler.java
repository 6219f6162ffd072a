package io.watchfanout.fanout.http;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.undertow.util.Methods;
import io.watchfanout.fanout.etcd.JsonGateway;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.Identity;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /v3/...}: etcd's JSON gateway ({@link JsonGateway}) on the HTTP port. The request
 * body is read whole, the call goes to the node's etcd API, and the answer is written by a thread
 * of its own with blocking writes, each line flushed (a watch's responses as they come). Not the
 * path for fleets of watchers (one thread per open stream, JSON printed per response): those use
 * {@code /v1/watch} or the gRPC API, whose frames are shared. A client that went away is noticed
 * at the next write, which cancels the call; since a watch of a quiet range (or one the policy
 * refused) may write nothing for long, at most {@link #MAX_WATCH_STREAMS} {@code /v3/watch}
 * streams are open at once, and one more gets 429 in the gateway's error shape.
 *
 * <p>Access (README.md, "Security"): the request is authenticated here, on the HTTP
 * listener's methods, before its body is read (401 in the gateway's error shape;
 * {@code /v3/auth/authenticate} needs no credentials); the services judge the rest (403, 429).
 *
 * <p>Thread-safety: one exchange per call; the gateway's sink hands lines to the writer thread.
 */
final class GatewayHandler implements HttpHandler {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayHandler.class);
    private static final byte[] NEWLINE = {'\n'};
    /**
     * The largest request body the gateway reads: the largest gRPC request of the etcd API in JSON
     * (base64 makes values 4/3 as long); etcd's own limit judges what it forwards.
     */
    static final int MAX_BODY_BYTES = io.watchfanout.fanout.etcd.EtcdApi.MAX_REQUEST_BYTES / 3 * 4 + 64 * 1024;
    /**
     * The largest body of {@code /v3/watch} and {@code /v3/kv/range}, which the node serves from its
     * cache: keys and options only, never values.
     */
    static final int MAX_CACHED_BODY_BYTES = 1024 * 1024;

    /** Open {@code /v3/watch} streams at most: each holds a writer thread until its next write fails. */
    static final int MAX_WATCH_STREAMS = 256;

    private final JsonGateway gateway;
    private final ExecutorService writers;
    private final java.util.concurrent.atomic.AtomicInteger watchStreams =
            new java.util.concurrent.atomic.AtomicInteger();

    GatewayHandler(JsonGateway gateway, ExecutorService writers) {
        this.gateway = gateway;
        this.writers = writers;
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) {
        String path = exchange.getRequestPath();
        if (!gateway.handles(path)) {
            exchange.setStatusCode(404);
            exchange.getResponseSender().send("Not Found\n");
            return;
        }
        if (!exchange.getRequestMethod().equals(Methods.POST)) {
            exchange.setStatusCode(405);
            exchange.getResponseSender().send("Method Not Allowed\n");
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
        if (watch) {
            exchange.addExchangeCompleteListener((ex, next) -> {
                watchStreams.decrementAndGet();
                next.proceed();
            });
        }
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
                        (ex, body) -> ex.dispatch(writers, () -> {
                            LinkedBlockingQueue<Object> out = new LinkedBlockingQueue<>();
                            JsonGateway.Call call =
                                    gateway.call(path, body, identity, authorization, new JsonGateway.Sink() {
                                        @Override
                                        public void start(int httpStatus) {
                                            out.add(httpStatus);
                                        }

                                        @Override
                                        public void line(byte[] json) {
                                            out.add(json);
                                        }

                                        @Override
                                        public void end() {
                                            out.add(NEWLINE);
                                        }
                                    });
                            write(ex, out, call);
                        }),
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

    private static void json(HttpServerExchange exchange, int status, String body) {
        exchange.setStatusCode(status);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
        exchange.getResponseSender().send(body + "\n");
    }

    /** The writer thread: status, then lines until the end marker or a failed write. */
    private static void write(HttpServerExchange ex, LinkedBlockingQueue<Object> out, JsonGateway.Call call) {
        ex.startBlocking();
        try {
            Object first = out.take();
            ex.setStatusCode((Integer) first);
            ex.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
            OutputStream os = ex.getOutputStream();
            while (true) {
                Object next = out.take();
                if (next == NEWLINE) {
                    break;
                }
                os.write((byte[]) next);
                os.write(NEWLINE);
                os.flush();
            }
            os.close();
        } catch (IOException e) {
            LOG.debug("gateway client went away: {}", e.toString());
            call.cancel();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            call.cancel();
        } finally {
            ex.endExchange();
        }
    }
}
