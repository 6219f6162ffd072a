package io.watchfanout.fanout.transport;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.HeaderMap;
import io.undertow.util.Headers;
import io.undertow.util.HttpString;
import io.undertow.util.Methods;
import io.watchfanout.fanout.watch.Statuses;

/**
 * Cross-origin resource sharing (the Fetch standard's CORS protocol) for the API paths,
 * {@code /v1/*} and etcd's JSON gateway {@code /v3/*} (README.md, "Browsers"), so that a page
 * served from another origin can list, watch with {@code EventSource} and call the gateway.
 * {@code /readyz}, {@code /livez} and {@code /metrics} are for probes and scrapers, not pages,
 * and get no CORS headers.
 *
 * <ul>
 *   <li>A request whose {@code Origin} is allowed gets {@code Access-Control-Allow-Origin} with
 *       that origin (echoed, also for {@code *}, so the answer is the same whatever the list) and
 *       {@code Access-Control-Expose-Headers: Retry-After} (a page that gets 503 or 504 reads
 *       when to retry; the other headers it needs are safelisted).</li>
 *   <li>A preflight ({@code OPTIONS} with {@code Origin} and
 *       {@code Access-Control-Request-Method}; a browser sends one before a {@code POST} of JSON
 *       to {@code /v3/}, or a request with {@code Authorization} or {@code Last-Event-ID}) from an
 *       allowed origin is answered here with 204: methods {@code GET, POST, OPTIONS}, headers
 *       {@code Accept, Authorization, Cache-Control, Content-Type, Last-Event-ID}, and a
 *       {@code Max-Age} of 600 s (Chromium caps it at 7200 s, Firefox at 86400 s). From any other
 *       origin it gets 403 {@code Forbidden} with a {@code Status} body naming the flag, and no
 *       CORS headers: the browser then refuses the request itself.</li>
 *   <li>Any other request from an origin not allowed is served as usual, without CORS headers:
 *       the browser keeps the answer from the page. Requests without {@code Origin} (curl,
 *       Kubernetes clients) are untouched.</li>
 * </ul>
 * Every answer on those paths carries {@code Vary: Origin} once any origin is allowed, as its
 * headers depend on it.
 *
 * <p>Stateless apart from its settings; thread-safe. Runs on the IO thread and never blocks.
 */
final class CorsHandler implements HttpHandler {
    /** Seconds a browser may cache a preflight's answer. */
    static final int MAX_AGE_SECONDS = 600;

    static final String ALLOWED_METHODS = "GET, POST, OPTIONS";
    static final String ALLOWED_HEADERS = "Accept, Authorization, Cache-Control, Content-Type, Last-Event-ID";
    static final String EXPOSED_HEADERS = "Retry-After";
    private static final HttpString ALLOW_ORIGIN = new HttpString("Access-Control-Allow-Origin");
    private static final HttpString ALLOW_METHODS = new HttpString("Access-Control-Allow-Methods");
    private static final HttpString ALLOW_HEADERS = new HttpString("Access-Control-Allow-Headers");
    private static final HttpString EXPOSE_HEADERS = new HttpString("Access-Control-Expose-Headers");
    private static final HttpString MAX_AGE = new HttpString("Access-Control-Max-Age");
    private static final HttpString REQUEST_METHOD = new HttpString("Access-Control-Request-Method");

    private final HttpHandler next;
    private final CorsOrigins origins;

    CorsHandler(HttpHandler next, CorsOrigins origins) {
        this.next = next;
        this.origins = origins;
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) throws Exception {
        String path = exchange.getRequestPath();
        if (!path.startsWith("/v1/") && !path.startsWith("/v3/")) {
            next.handleRequest(exchange);
            return;
        }
        HeaderMap request = exchange.getRequestHeaders();
        HeaderMap response = exchange.getResponseHeaders();
        if (!origins.isEmpty()) {
            response.add(Headers.VARY, "Origin");
        }
        String origin = request.getFirst(Headers.ORIGIN);
        if (origin == null) {
            next.handleRequest(exchange);
            return;
        }
        boolean allowed = origins.allows(origin);
        boolean preflight = exchange.getRequestMethod().equals(Methods.OPTIONS) && request.contains(REQUEST_METHOD);
        if (preflight) {
            if (!allowed) {
                Responses.status(
                        exchange,
                        Statuses.of(
                                403,
                                "Forbidden",
                                "origin " + origin + " may not read this API "
                                        + "across origins (--cors-allowed-origins: " + origins + ")"),
                        0);
                return;
            }
            response.put(ALLOW_ORIGIN, origin);
            response.put(ALLOW_METHODS, ALLOWED_METHODS);
            response.put(ALLOW_HEADERS, ALLOWED_HEADERS);
            response.put(MAX_AGE, Integer.toString(MAX_AGE_SECONDS));
            exchange.setStatusCode(204);
            exchange.endExchange();
            return;
        }
        if (allowed) {
            response.put(ALLOW_ORIGIN, origin);
            response.put(EXPOSE_HEADERS, EXPOSED_HEADERS);
        }
        next.handleRequest(exchange);
    }
}
