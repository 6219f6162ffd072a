package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.Status;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** CORS on {@code /v1/*} and {@code /v3/*} ({@link CorsHandler}), with the JDK's HTTP client as a browser would ask. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CorsTest {
    private static final String PAGE = "http://127.0.0.1:8090";
    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    private HttpResponse<String> send(TestNode node, String method, String pathAndQuery, String... headers)
            throws Exception {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(node.uri(pathAndQuery)).method(method, HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            b.headers(headers);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> assertNoCors(HttpResponse<String> r) {
        assertThat(r.headers().map().keySet())
                .noneMatch(h -> h.toLowerCase(java.util.Locale.ROOT).startsWith("access-control-"));
        return r;
    }

    @Test
    void anAllowedOriginReadsListsErrorsAndWatches() throws Exception {
        TestNode node = nodes.startWithCors(CorsOrigins.of(List.of(PAGE, "https://other.test")));
        node.feed(node.etcd.put("/a/1", "x"));
        HttpResponse<String> list = send(node, "GET", "/v1/kv?key=%2Fa%2F&prefix=true", "Origin", PAGE);
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.headers().firstValue("Access-Control-Allow-Origin")).hasValue(PAGE);
        assertThat(list.headers().allValues("Vary")).contains("Origin");
        assertThat(list.headers().firstValue("Access-Control-Expose-Headers")).hasValue("Retry-After");
        assertThat(list.headers().firstValue("Access-Control-Allow-Credentials"))
                .isEmpty();
        // An error answer is readable too: the page learns why.
        HttpResponse<String> bad = send(node, "GET", "/v1/kv", "Origin", "https://other.test");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.headers().firstValue("Access-Control-Allow-Origin")).hasValue("https://other.test");
        // The gateway's paths get the same headers (here without --etcd-api-port: its 404).
        HttpResponse<String> v3 = send(node, "POST", "/v3/kv/range", "Origin", PAGE);
        assertThat(v3.statusCode()).isEqualTo(404);
        assertThat(v3.headers().firstValue("Access-Control-Allow-Origin")).hasValue(PAGE);
        // A watch stream carries them in its 200 headers.
        HttpResponse<InputStream> watch = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=%2Fa%2F&prefix=true"))
                        .header("Accept", "text/event-stream")
                        .header("Origin", PAGE)
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(watch.statusCode()).isEqualTo(200);
        assertThat(watch.headers().firstValue("Access-Control-Allow-Origin")).hasValue(PAGE);
        watch.body().close();
        // Probes and scrapers are not for pages; requests without Origin are untouched.
        assertNoCors(send(node, "GET", "/readyz", "Origin", PAGE));
        assertNoCors(send(node, "GET", "/metrics", "Origin", PAGE));
        assertThat(assertNoCors(send(node, "GET", "/v1/kv?key=a")).statusCode()).isEqualTo(200);
    }

    @Test
    void aPreflightFromAnAllowedOriginIs204WithMethodsHeadersAndMaxAge() throws Exception {
        TestNode node = nodes.startWithCors(CorsOrigins.of(List.of(PAGE)));
        HttpResponse<String> r = send(
                node,
                "OPTIONS",
                "/v1/watch?key=a",
                "Origin",
                PAGE,
                "Access-Control-Request-Method",
                "GET",
                "Access-Control-Request-Headers",
                "last-event-id,authorization");
        assertThat(r.statusCode()).isEqualTo(204);
        assertThat(r.body()).isEmpty();
        assertThat(r.headers().firstValue("Access-Control-Allow-Origin")).hasValue(PAGE);
        assertThat(r.headers().allValues("Vary")).contains("Origin");
        assertThat(r.headers().firstValue("Access-Control-Allow-Methods")).hasValue("GET, POST, OPTIONS");
        assertThat(r.headers().firstValue("Access-Control-Allow-Headers"))
                .hasValueSatisfying(
                        h -> assertThat(h).contains("Last-Event-ID", "Accept", "Content-Type", "Authorization"));
        assertThat(r.headers().firstValue("Access-Control-Max-Age")).hasValue("600");
        HttpResponse<String> gateway = send(
                node,
                "OPTIONS",
                "/v3/kv/range",
                "Origin",
                PAGE,
                "Access-Control-Request-Method",
                "POST",
                "Access-Control-Request-Headers",
                "content-type");
        assertThat(gateway.statusCode()).isEqualTo(204);
        assertThat(gateway.headers().firstValue("Access-Control-Allow-Origin")).hasValue(PAGE);
        // OPTIONS that is no preflight is not CORS's: the API's 405 as before.
        assertThat(send(node, "OPTIONS", "/v1/watch?key=a").statusCode()).isEqualTo(405);
    }

    @Test
    void aDisallowedOriginGetsNoCorsHeadersAndItsPreflight403() throws Exception {
        TestNode node = nodes.startWithCors(CorsOrigins.of(List.of(PAGE)));
        HttpResponse<String> r = assertNoCors(send(node, "GET", "/v1/kv?key=a", "Origin", "http://127.0.0.1:8091"));
        assertThat(r.statusCode())
                .as("served; the browser keeps it from the page")
                .isEqualTo(200);
        HttpResponse<String> preflight = assertNoCors(send(
                node,
                "OPTIONS",
                "/v1/watch?key=a",
                "Origin",
                "http://evil.test",
                "Access-Control-Request-Method",
                "GET"));
        assertThat(preflight.statusCode()).isEqualTo(403);
        Status s = Frames.parseStatus(preflight.body());
        assertThat(s.getReason()).isEqualTo("Forbidden");
        assertThat(s.getMessage()).contains("http://evil.test", "--cors-allowed-origins: " + PAGE);
    }

    @Test
    void byDefaultNoOriginIsAllowedAndStarAllowsAny() throws Exception {
        TestNode none = nodes.start(1000, 256, true);
        assertThat(assertNoCors(send(none, "GET", "/v1/kv?key=a", "Origin", PAGE))
                        .headers()
                        .allValues("Vary"))
                .doesNotContain("Origin");
        HttpResponse<String> preflight = assertNoCors(
                send(none, "OPTIONS", "/v1/kv?key=a", "Origin", PAGE, "Access-Control-Request-Method", "GET"));
        assertThat(preflight.statusCode()).isEqualTo(403);
        assertThat(Frames.parseStatus(preflight.body()).getMessage()).contains("--cors-allowed-origins: none");
        TestNode any = nodes.startWithCors(CorsOrigins.of(List.of("*")));
        HttpResponse<String> r = send(any, "GET", "/v1/kv?key=a", "Origin", "https://whoever.test:4443");
        assertThat(r.headers().firstValue("Access-Control-Allow-Origin")).hasValue("https://whoever.test:4443");
    }
}
