package io.watchfanout.ingester.ops;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import io.undertow.Undertow;
import io.undertow.server.HttpServerExchange;
import io.undertow.server.RoutingHandler;
import io.undertow.util.Headers;
import io.undertow.util.StatusCodes;
import io.watchfanout.common.tls.ServerTls;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.function.Supplier;
import org.xnio.Options;
import org.xnio.SslClientAuthMode;

/**
 * The ingester's operations endpoints: {@code /metrics} (Prometheus text format),
 * {@code /readyz} (200 while publishing from a live watch, else 503 with the reason) and
 * {@code /livez} (200 unless the ingester has stopped for good). Over HTTPS with a
 * {@link ServerTls} ({@code --tls-cert-file}; with client CAs, to clients with a certificate
 * they signed only), whose certificate is reloaded from disk for new connections.
 *
 * <p>Thread-safe.
 */
public final class OpsServer implements AutoCloseable {
    private final Undertow server;

    /**
     * @param host address to bind
     * @param port port to bind (0 for any free port)
     * @param registry the metrics to serve
     * @param notReadyReason empty string when ready, else why not
     * @param notLiveReason empty string when live, else why not
     */
    public OpsServer(
            String host,
            int port,
            CollectorRegistry registry,
            Supplier<String> notReadyReason,
            Supplier<String> notLiveReason) {
        this(host, port, registry, notReadyReason, notLiveReason, null);
    }

    /**
     * As the plaintext constructor, over TLS when {@code tls} is not null.
     *
     * @param tls the certificate and client CAs, or null for plaintext HTTP
     */
    public OpsServer(
            String host,
            int port,
            CollectorRegistry registry,
            Supplier<String> notReadyReason,
            Supplier<String> notLiveReason,
            ServerTls tls) {
        RoutingHandler routes = new RoutingHandler()
                .get("/metrics", exchange -> metrics(exchange, registry))
                .get("/readyz", exchange -> probe(exchange, notReadyReason.get()))
                .get("/livez", exchange -> probe(exchange, notLiveReason.get()))
                .setFallbackHandler(exchange -> {
                    exchange.setStatusCode(StatusCodes.NOT_FOUND);
                    exchange.getResponseSender().send("not found: " + exchange.getRequestPath() + "\n");
                });
        Undertow.Builder builder = Undertow.builder();
        if (tls == null) {
            builder.addHttpListener(port, host);
        } else {
            builder.addHttpsListener(port, host, tls.sslContext());
            if (tls.clientAuthRequired()) {
                builder.setSocketOption(Options.SSL_CLIENT_AUTH_MODE, SslClientAuthMode.REQUIRED);
            }
        }
        server = builder.setIoThreads(1).setWorkerThreads(2).setHandler(routes).build();
        try {
            server.start();
        } catch (RuntimeException e) {
            // Undertow wraps the BindException (or an unknown host) in a RuntimeException.
            try {
                server.stop(); // the worker threads it did start
            } catch (RuntimeException ignored) {
                // nothing more to release
            }
            Throwable cause = e;
            while (cause.getCause() != null && !(cause instanceof IOException)) {
                cause = cause.getCause();
            }
            throw new CannotListenException(
                    "cannot listen on " + host + ":" + port + ": "
                            + Objects.requireNonNullElse(cause.getMessage(), cause.toString()),
                    e);
        }
    }

    /** The address of the operations endpoints cannot be bound: taken, or not an address of this host. */
    public static final class CannotListenException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CannotListenException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The bound port. */
    public int port() {
        return ((InetSocketAddress) server.getListenerInfo().get(0).getAddress()).getPort();
    }

    private static void metrics(HttpServerExchange exchange, CollectorRegistry registry) {
        StringWriter out = new StringWriter();
        try {
            TextFormat.write004(out, registry.metricFamilySamples());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, TextFormat.CONTENT_TYPE_004);
        exchange.getResponseSender().send(out.toString());
    }

    private static void probe(HttpServerExchange exchange, String reason) {
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "text/plain; charset=utf-8");
        if (reason.isEmpty()) {
            exchange.getResponseSender().send("ok\n");
        } else {
            exchange.setStatusCode(StatusCodes.SERVICE_UNAVAILABLE);
            exchange.getResponseSender().send(reason + "\n");
        }
    }

    @Override
    public void close() {
        server.stop();
    }
}
