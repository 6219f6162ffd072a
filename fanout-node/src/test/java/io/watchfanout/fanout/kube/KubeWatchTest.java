package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.metrics.NodeMetrics;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.TcpKeepalive;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Kubernetes watches on an in-process node's HTTP port: initial events from resourceVersion 0,
 * changes in order with DELETED at the deletion's revision, selectors evaluated once per event with
 * objects leaving (entering) the selection as DELETED (ADDED), the {@code spec.nodeName} index
 * visiting only the watchers of the pod's node, watch-list's closing bookmark, and 410 as an ERROR
 * event; each event rendered once per encoding however many watch it.
 */
class KubeWatchTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Duration WAIT = Duration.ofSeconds(2);

    private final EtcdLog etcd = new EtcdLog(100);
    private final List<Stream> streams = new ArrayList<>();
    private WatchCore core;
    private HttpApi http;
    private RecordFeed applier;

    private void start(int historyMaxEvents) {
        core = new WatchCore(
                CoreSettings.of(historyMaxEvents, Duration.ofMinutes(10), 256, "kube-watch"), new FrameEncoder());
        core.start();
        core.feed().startAt(100);
        core.feed().markReady();
        applier = new RecordFeed(core.feed(), 100);
        CollectorRegistry registry = NodeMetrics.registry(core, null);
        http = new HttpApi(
                core,
                new HttpSettings(
                        WAIT,
                        1,
                        "kube-watch",
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(30),
                        new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3)),
                registry,
                "127.0.0.1",
                0);
        new KubeApi(
                        core,
                        new KubeSettings("/registry", WAIT, 1, "kube-watch"),
                        AccessControl.open("kube-watch", WatchLimits.NONE),
                        null,
                        registry)
                .mountOn(http);
        http.start();
    }

    @AfterEach
    void stop() throws Exception {
        for (Stream s : streams) {
            s.close();
        }
        if (http != null) {
            http.stop();
            core.close();
        }
    }

    private void pod(String ns, String name, String node, String app) {
        etcd.put(
                        "/registry/pods/" + ns + "/" + name,
                        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" + name
                                + "\",\"namespace\":\""
                                + ns + "\",\"labels\":{\"app\":\"" + app + "\"}},\"spec\":{\"nodeName\":\"" + node
                                + "\"}}")
                .forEach(applier::accept);
    }

    /** One watch response read line by line on a thread of its own. */
    private final class Stream implements AutoCloseable {
        final List<JsonObject> events = new CopyOnWriteArrayList<>();
        volatile int status;
        volatile InputStream body;

        Stream(String query) {
            URI uri = URI.create("http://127.0.0.1:" + http.port() + "/api/v1/pods?watch=1&" + query);
            Thread t = new Thread(() -> {
                try {
                    HttpResponse<InputStream> r = HTTP.send(
                            HttpRequest.newBuilder(uri)
                                    .header("Accept", "application/json")
                                    .build(),
                            HttpResponse.BodyHandlers.ofInputStream());
                    body = r.body();
                    status = r.statusCode();
                    BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
                    String line;
                    while ((line = in.readLine()) != null) {
                        events.add(JsonParser.parseString(line).getAsJsonObject());
                    }
                } catch (Exception e) {
                    // closed by the test
                }
            });
            t.setDaemon(true);
            t.start();
            streams.add(this);
        }

        List<String> summary() {
            List<String> out = new ArrayList<>();
            for (JsonObject e : events) {
                JsonObject o = e.getAsJsonObject("object");
                JsonObject meta = o.getAsJsonObject("metadata");
                String type = e.get("type").getAsString();
                out.add(
                        type.equals("ERROR")
                                ? type + " " + o.get("code").getAsInt()
                                : type + " "
                                        + (meta.has("name") ? meta.get("name").getAsString() : "") + " @"
                                        + meta.get("resourceVersion").getAsString());
            }
            return out;
        }

        @Override
        public void close() throws java.io.IOException {
            if (body != null) {
                body.close();
            }
        }
    }

    @Test
    void fromZeroTheCurrentObjectsThenTheirChangesWithDeletedAtTheDeletionsRevision() {
        start(1000);
        pod("a", "p1", "n1", "web");
        pod("a", "p2", "n1", "web");
        Stream s = new Stream("resourceVersion=0");
        await().until(() -> s.events.size() == 2);
        pod("a", "p1", "n2", "web");
        etcd.delete("/registry/pods/a/p2").forEach(applier::accept);
        await().until(() -> s.events.size() == 4);
        assertThat(s.summary())
                .containsExactly("ADDED p1 @101", "ADDED p2 @102", "MODIFIED p1 @103", "DELETED p2 @104");
        assertThat(s.events.get(0).getAsJsonObject("object").get("kind").getAsString())
                .isEqualTo("Pod");
    }

    @Test
    void anObjectLeavingTheLabelSelectorIsDeletedForItsWatchersAndRenderedOnce() {
        start(1000);
        List<Stream> web = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            web.add(new Stream("resourceVersion=100&labelSelector=app%3Dweb"));
        }
        await().until(() -> core.status().liveWatcherCount() == 5);
        pod("a", "p1", "n1", "web");
        pod("a", "p1", "n1", "db");
        pod("a", "p1", "n1", "web");
        for (Stream s : web) {
            await().until(() -> s.events.size() == 3);
            assertThat(s.summary()).containsExactly("ADDED p1 @101", "DELETED p1 @102", "ADDED p1 @103");
        }
        FrameEncoder enc = core.frameEncoder();
        assertThat(enc.encodes(KubeEncodings.JSON, FrameKind.LEFT))
                .as("one DELETED for 5 watchers")
                .isEqualTo(1);
        assertThat(enc.encodes(KubeEncodings.JSON, FrameKind.ENTERED)).isEqualTo(1);
        assertThat(enc.encodes(KubeEncodings.JSON, FrameKind.EVENT)).isEqualTo(1);
    }

    @Test
    void aKubeletsWatchOfItsPodsIsVisitedOnlyByItsNodesPods() {
        start(1000);
        List<Stream> kubelets = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            kubelets.add(new Stream("resourceVersion=100&fieldSelector=spec.nodeName%3Dn" + i));
        }
        await().until(() -> core.status().liveWatcherCount() == 20);
        long visits = core.status().valueIndexVisits();
        pod("a", "p1", "n3", "web");
        await().until(() -> kubelets.get(3).events.size() == 1);
        assertThat(core.status().valueIndexVisits() - visits)
                .as("n3's bucket only")
                .isEqualTo(1);
        pod("a", "p1", "n7", "web"); // rescheduled: gone from n3, new on n7
        await().until(() ->
                kubelets.get(7).events.size() == 1 && kubelets.get(3).events.size() == 2);
        assertThat(kubelets.get(3).summary()).containsExactly("ADDED p1 @101", "DELETED p1 @102");
        assertThat(kubelets.get(7).summary()).containsExactly("ADDED p1 @102");
        for (int i = 0; i < 20; i++) {
            if (i != 3 && i != 7) {
                assertThat(kubelets.get(i).events).as("kubelet n" + i).isEmpty();
            }
        }
    }

    @Test
    void aWatchListEndsItsInitialEventsWithTheAnnotatedBookmark() {
        start(1000);
        pod("a", "p1", "n1", "web");
        Stream s = new Stream("sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
                + "&resourceVersion=0");
        await().until(() -> s.events.size() == 2);
        assertThat(s.summary()).containsExactly("ADDED p1 @101", "BOOKMARK  @101");
        JsonObject bookmark = s.events.get(1).getAsJsonObject("object");
        assertThat(bookmark.get("kind").getAsString()).isEqualTo("Pod");
        assertThat(bookmark.getAsJsonObject("metadata")
                        .getAsJsonObject("annotations")
                        .get("k8s.io/initial-events-end")
                        .getAsString())
                .isEqualTo("true");
    }

    @Test
    void aResourceVersionOlderThanTheHistoryIsAnExpiredErrorEvent() {
        start(3);
        for (int i = 0; i < 10; i++) {
            pod("a", "p" + i, "n1", "web");
        }
        Stream s = new Stream("resourceVersion=101");
        await().until(() -> s.events.size() == 1);
        assertThat(s.status).isEqualTo(200);
        assertThat(s.summary()).containsExactly("ERROR 410");
        assertThat(s.events.get(0).getAsJsonObject("object").get("reason").getAsString())
                .isEqualTo("Expired");
    }

    @Test
    void theHeadersOfAWatchArriveBeforeItsFirstEvent() throws Exception {
        start(1000);
        // Clients call a watch open once its headers are in (client-go, fabric8); a quiet one must not hang.
        var response = HTTP.sendAsync(
                HttpRequest.newBuilder(URI.create(
                                "http://127.0.0.1:" + http.port() + "/api/v1/pods?watch=1&resourceVersion=100"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        await().until(response::isDone);
        assertThat(response.get().statusCode()).isEqualTo(200);
        assertThat(response.get().headers().firstValue("Content-Type")).hasValue("application/json");
        response.get().body().close();
    }

    @Test
    void aWebSocketUpgradeIsRefusedSoThatFabric8WatchesOverHttp() throws Exception {
        start(1000);
        // As fabric8's first attempt; java.net.http will not send Upgrade itself.
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", http.port())) {
            socket.getOutputStream()
                    .write(("GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                                    + "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            assertThat(in.readLine()).isEqualTo("HTTP/1.1 503 Service Unavailable");
            String line;
            long length = -1;
            while (!(line = in.readLine()).isEmpty()) {
                if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                    length = Long.parseLong(line.substring(15).trim());
                }
            }
            assertThat(length)
                    .as("a body that ends, which the WebSocket handshake reads whole")
                    .isPositive();
            char[] body = new char[(int) length];
            assertThat(in.read(body)).isPositive();
            assertThat(new String(body)).contains("\"kind\":\"Status\"", "WebSocket");
        }
    }

    @Test
    void badWatchParametersAreRefusedWithAStatus() throws Exception {
        start(1000);
        // kube-apiserver: ListOptions validation is 422 Invalid, what does not parse 400 BadRequest.
        Map<String, Integer> codes = Map.of(
                "sendInitialEvents=true", 422,
                "resourceVersionMatch=Exact", 422,
                "resourceVersion=x", 400,
                "timeoutSeconds=x", 400,
                "labelSelector=a%3D%3D%3Db", 400,
                "fieldSelector=spec.unknown%3Dx", 400);
        for (Map.Entry<String, Integer> e : codes.entrySet()) {
            String query = e.getKey();
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(
                                    URI.create("http://127.0.0.1:" + http.port() + "/api/v1/pods?watch=1&" + query))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(query).isEqualTo(e.getValue());
            assertThat(r.body()).as(query).contains("\"kind\":\"Status\"");
        }
    }
}
