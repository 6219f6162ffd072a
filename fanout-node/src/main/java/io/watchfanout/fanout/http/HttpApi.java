package io.watchfanout.fanout.http;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import io.undertow.Undertow;
import io.undertow.UndertowOptions;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Methods;
import io.watchfanout.fanout.watch.Statuses;
import io.watchfanout.fanout.watch.WatchHub;
import java.io.StringWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.Options;

/**
 * The fan-out node's HTTP server (Undertow): {@code /v1/watch}, {@code /v1/kv},
 * {@code /readyz}, {@code /livez}, {@code /metrics}; any other path is a 404 {@code Status}.
 *
 * <p>Thread-safety: {@link #start()} and {@link #stop()} from one controlling thread;
 * {@link #stopAccepting()} from any thread.
 */
public final class HttpApi {
  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);

  private final WatchHub hub;
  private final HttpSettings settings;
  private final CollectorRegistry registry;
  private final String bindAddress;
  private final int requestedPort;
  private final AtomicBoolean draining = new AtomicBoolean();
  private Undertow server;
  private int port;

  /**
   * @param hub the watch hub to serve
   * @param settings API settings
   * @param registry the metrics served at {@code /metrics}
   * @param bindAddress the address to listen on, e.g. {@code 127.0.0.1}
   * @param port the port, 0 for a free one
   */
  public HttpApi(WatchHub hub, HttpSettings settings, CollectorRegistry registry, String bindAddress, int port) {
    this.hub = hub;
    this.settings = settings;
    this.registry = registry;
    this.bindAddress = bindAddress;
    this.requestedPort = port;
  }

  /** Starts listening; {@link #port()} tells where. */
  public void start() {
    WatchHandler watch = new WatchHandler(hub, settings);
    KvHandler kv = new KvHandler(hub, settings);
    HttpHandler root = exchange -> route(exchange, watch, kv);
    server = Undertow.builder()
        .addHttpListener(requestedPort, bindAddress)
        .setSocketOption(Options.TCP_NODELAY, true)
        .setServerOption(UndertowOptions.NO_REQUEST_TIMEOUT, -1)
        // We decode the query ourselves, to raw bytes (etcd keys are not text), and answer
        // bad percent-encoding with a Status body rather than Undertow's bare 400.
        .setServerOption(UndertowOptions.DECODE_URL, false)
        .setHandler(root)
        .build();
    server.start();
    port = ((InetSocketAddress) server.getListenerInfo().get(0).getAddress()).getPort();
    LOG.info("[node {}] serving HTTP on {}:{}", settings.nodeId(), bindAddress, port);
  }

  /** The port listened on (after {@link #start()}). */
  public int port() {
    return port;
  }

  /** New watches and lists get 503 from now on (shutdown drain); readiness fails. */
  public void stopAccepting() {
    draining.set(true);
  }

  /** Stops the server and closes every connection. */
  public void stop() {
    if (server != null) {
      server.stop();
      server = null;
    }
  }

  private void route(HttpServerExchange exchange, WatchHandler watch, KvHandler kv) throws Exception {
    String path = exchange.getRequestPath();
    boolean get = exchange.getRequestMethod().equals(Methods.GET) || exchange.getRequestMethod().equals(Methods.HEAD);
    switch (path) {
      case "/v1/watch":
      case "/v1/kv":
        if (!exchange.getRequestMethod().equals(Methods.GET)) {
          Responses.status(exchange, Statuses.methodNotAllowed(exchange.getRequestMethod() + " " + path
              + " (expected: GET)"), 0);
        } else if (draining.get()) {
          Responses.status(exchange, Statuses.notReady("this node is shutting down; ask another node"),
              settings.retryAfterSeconds());
        } else if (path.equals("/v1/watch")) {
          watch.handleRequest(exchange);
        } else {
          kv.handleRequest(exchange);
        }
        return;
      case "/readyz":
        if (!get) {
          break;
        }
        if (hub.isReady() && !draining.get()) {
          Responses.ok(exchange, "text/plain", "ok\n".getBytes(StandardCharsets.UTF_8));
        } else {
          exchange.setStatusCode(503);
          String why = draining.get() ? "shutting down" : hub.failure() != null
              ? "cache failed: " + hub.failure() : "cache is rebuilding from Kafka";
          exchange.getResponseSender().send("not ready: " + why + "\n");
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
        Responses.status(exchange, Statuses.notFound("no such path: " + path
            + " (expected: /v1/watch, /v1/kv, /readyz, /livez or /metrics)"), 0);
        return;
    }
    Responses.status(exchange, Statuses.methodNotAllowed(exchange.getRequestMethod() + " " + path
        + " (expected: GET)"), 0);
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

  /** @throws ApiException 503 NotReady while rebuilding or after the cache failed */
  static void checkServing(WatchHub hub) throws ApiException {
    String failure = hub.failure();
    if (failure != null) {
      throw new ApiException(Statuses.notReady("this node stopped serving: " + failure), 1);
    }
    if (!hub.isReady()) {
      throw new ApiException(Statuses.notReady(
          "the cache is rebuilding from Kafka; retry, or ask another node"), 1);
    }
  }
}
