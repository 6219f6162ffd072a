package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.metrics.NodeMetrics;
import io.watchfanout.fanout.security.TestAccess;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.TcpKeepalive;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes API mounted on an in-process node's HTTP port: the mount's routing, discovery,
 * readiness, and the node's access control applied to the etcd keys a read covers.
 */
class KubeApiTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private WatchCore core;
    private HttpApi http;
    private final EtcdLog etcd = new EtcdLog(100);
    private RecordFeed applier;

    private void start(boolean ready, TestAccess access) {
        core = new WatchCore(CoreSettings.of(1000, Duration.ofMinutes(10), 256, "kube-test"), new FrameEncoder());
        core.start();
        core.feed().startAt(100);
        if (ready) {
            core.feed().markReady();
        }
        applier = new RecordFeed(core.feed(), 100);
        CollectorRegistry registry = NodeMetrics.registry(core, null);
        http = new HttpApi(
                core,
                new HttpSettings(
                        WAIT,
                        1,
                        "kube-test",
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(30),
                        new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3)),
                registry,
                "127.0.0.1",
                0);
        new KubeApi(
                        core,
                        new KubeSettings("/registry", WAIT, 1, "kube-test"),
                        access != null
                                ? access.access()
                                : io.watchfanout.fanout.security.AccessControl.open("kube-test", WatchLimits.NONE),
                        null,
                        registry)
                .mountOn(http);
        http.start();
    }

    @AfterEach
    void stop() {
        if (http != null) {
            http.stop();
        }
        if (core != null) {
            core.close();
        }
    }

    private void configMap(String namespace, String name) {
        etcd.put(
                        "/registry/configmaps/" + namespace + "/" + name,
                        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" + name
                                + "\",\"namespace\":\"" + namespace + "\"},\"data\":{\"k\":\"v\"}}")
                .forEach(applier::accept);
    }

    private HttpResponse<String> get(String path, String accept, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path))
                .header("Accept", accept);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonObject json(HttpResponse<String> r) {
        return JsonParser.parseString(r.body()).getAsJsonObject();
    }

    @Test
    void mountedPrefixesAreRoutedBySegmentAheadOfTheNodesOwnPaths() throws Exception {
        start(true, null);
        configMap("a", "one");
        assertThat(get("/version", "application/json", null).statusCode()).isEqualTo(200);
        assertThat(json(get("/version", "application/json", null)).get("major").getAsString())
                .isEqualTo("1");
        assertThat(get("/api/v1/namespaces/a/configmaps/one", "application/json", null)
                        .statusCode())
                .isEqualTo(200);
        // A subresource that reaches kubelets through kube-apiserver (kubectl logs): a 404 that says where to go.
        HttpResponse<String> logs = get("/api/v1/namespaces/a/pods/web-0/log", "application/json", null);
        assertThat(logs.statusCode()).isEqualTo(404);
        assertThat(json(logs).get("reason").getAsString()).isEqualTo("NotFound");
        assertThat(json(logs).get("message").getAsString())
                .startsWith("the server could not find the requested resource: ")
                .contains("not pods/log")
                .endsWith("ask kube-apiserver");
        // Not below a mounted prefix: the node's own 404, naming its paths.
        HttpResponse<String> apisx = get("/apisx", "application/json", null);
        assertThat(apisx.statusCode()).isEqualTo(404);
        assertThat(apisx.body()).contains("/v1/watch");
        // The port's own routes are untouched.
        assertThat(get("/readyz", "text/plain", null).statusCode()).isEqualTo(200);

        assertThatThrownBy(() -> http.mount("/other", exchange -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("before start");
        HttpApi fresh = new HttpApi(core, null, new CollectorRegistry(), "127.0.0.1", 0);
        fresh.mount("/v1", exchange -> {});
        assertThatThrownBy(() -> fresh.mount("/v1/kube", exchange -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/v1");
        assertThatThrownBy(() -> fresh.mount("/api/", exchange -> {})).isInstanceOf(IllegalArgumentException.class);
        fresh.mount("/api", exchange -> {});
        assertThatThrownBy(() -> fresh.mount("/api", exchange -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mounted already");
    }

    @Test
    void discoveryIsAggregatedWhenAskedForAndLegacyOtherwise() throws Exception {
        start(true, null);
        HttpResponse<String> aggregated = get("/apis", KubeDiscovery.AGGREGATED_MEDIA_TYPE + ",application/json", null);
        assertThat(aggregated.headers().firstValue("Content-Type")).hasValue(KubeDiscovery.AGGREGATED_MEDIA_TYPE);
        assertThat(json(aggregated).get("kind").getAsString()).isEqualTo("APIGroupDiscoveryList");
        assertThat(json(get("/apis", "application/json", null)).get("kind").getAsString())
                .isEqualTo("APIGroupList");
        assertThat(json(get("/api", "application/json", null)).get("kind").getAsString())
                .isEqualTo("APIVersions");
        JsonObject apps = json(get("/apis/apps/v1", "application/json", null));
        assertThat(apps.get("kind").getAsString()).isEqualTo("APIResourceList");
        assertThat(apps.toString()).contains("\"deployments\"");
        assertThat(get("/apis/apps/v9", "application/json", null).statusCode()).isEqualTo(404);
    }

    @Test
    void aListLargerThanWhatIsHeldBackIsStreamedWhole() throws Exception {
        start(true, null);
        String filler = "x".repeat(4096);
        for (int i = 0; i < 400; i++) {
            etcd.put(
                            String.format("/registry/configmaps/big/cm-%03d", i),
                            "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\""
                                    + String.format("cm-%03d", i) + "\",\"namespace\":\"big\"},\"data\":{\"k\":\""
                                    + filler + "\"}}")
                    .forEach(applier::accept);
        }
        HttpResponse<String> list = get("/api/v1/namespaces/big/configmaps", "application/json", null);
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.body().length()).isGreaterThan(KubeResponse.HOLD_BYTES);
        List<String> names = KubeApiEndToEndTest.names(json(list));
        assertThat(names).hasSize(400).startsWith("cm-000").endsWith("cm-399");

        HttpResponse<String> table = get(
                "/api/v1/namespaces/big/configmaps?limit=2",
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
                null);
        assertThat(table.headers().firstValue("Content-Type")).hasValue("application/json;as=Table;v=v1;g=meta.k8s.io");
        JsonObject t = json(table);
        assertThat(t.get("kind").getAsString()).isEqualTo("Table");
        assertThat(t.getAsJsonArray("rows")).hasSize(2);
        assertThat(t.getAsJsonObject("metadata").get("continue")).isNotNull();
    }

    @Test
    void objectsStoredAsJsonGoToProtobufClientsAsTheirNextChoice() throws Exception {
        start(true, null);
        configMap("a", "one");
        HttpResponse<String> typed =
                get("/api/v1/namespaces/a/configmaps", "application/vnd.kubernetes.protobuf, application/json", null);
        assertThat(typed.statusCode()).isEqualTo(200);
        assertThat(typed.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(KubeApiEndToEndTest.names(json(typed))).containsExactly("one");
        HttpResponse<String> onlyProtobuf =
                get("/api/v1/namespaces/a/configmaps/one", "application/vnd.kubernetes.protobuf", null);
        assertThat(onlyProtobuf.statusCode()).isEqualTo(500);
        assertThat(json(onlyProtobuf).get("message").getAsString())
                .contains("/registry/configmaps/a/one")
                .contains("no protobuf form");
    }

    @Test
    void aNodeNotReadyAnswers503WithRetryAfter() throws Exception {
        start(false, null);
        HttpResponse<String> r = get("/api/v1/pods", "application/json", null);
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(json(r).get("kind").getAsString()).isEqualTo("Status");
        assertThat(json(r).get("reason").getAsString()).isEqualTo("ServiceUnavailable");
    }

    @Test
    void readsAreAuthenticatedAndAuthorizedOnTheKeysTheyCover() throws Exception {
        TestAccess access = TestAccess.create(
                dir.resolve("policy.json"), TestAccess.rule("alice", "/registry/configmaps/a/"), WatchLimits.NONE);
        start(true, access);
        configMap("a", "one");
        configMap("b", "two");

        HttpResponse<String> anonymous = get("/api/v1/namespaces/a/configmaps", "application/json", null);
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(json(anonymous).get("reason").getAsString()).isEqualTo("Unauthorized");
        assertThat(anonymous.headers().firstValue("WWW-Authenticate")).isPresent();

        HttpResponse<String> list = get("/api/v1/namespaces/a/configmaps", "application/json", TestAccess.ALICE);
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
        assertThat(KubeApiEndToEndTest.names(json(list))).containsExactly("one");
        assertThat(get("/api/v1/namespaces/a/configmaps/one", "application/json", TestAccess.ALICE)
                        .statusCode())
                .isEqualTo(200);
        for (String denied : new String[] {
            "/api/v1/namespaces/b/configmaps", "/api/v1/configmaps", "/api/v1/namespaces/b/configmaps/two"
        }) {
            HttpResponse<String> r = get(denied, "application/json", TestAccess.ALICE);
            assertThat(r.statusCode()).as(denied).isEqualTo(403);
            assertThat(json(r).get("reason").getAsString()).isEqualTo("Forbidden");
        }
        assertThat(get("/api/v1/namespaces/a/configmaps", "application/json", TestAccess.BOB)
                        .statusCode())
                .isEqualTo(403);
    }
}
