package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
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
import io.watchfanout.kube.codec.StoredObjects;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Metadata-only reads ({@code as=PartialObjectMetadata}, {@code as=PartialObjectMetadataList}) on
 * an in-process node's HTTP port, as kube-controller-manager's garbage collector and namespace
 * controller make them: gets, lists and watches in JSON and protobuf (decoded with
 * client-java-proto's {@code meta.v1} messages), a watch-list, and each event's metadata rendered
 * once per form however many watchers ask for it.
 */
class KubeMetadataTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final String JSON_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    private static final String JSON_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    /** client-go's metadata client: protobuf first, then JSON. */
    private static final String PROTOBUF_ONE =
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," + JSON_ONE;

    private static final String PROTOBUF_LIST =
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," + JSON_LIST;

    private final EtcdLog etcd = new EtcdLog(100);
    private final List<AutoCloseable> streams = new ArrayList<>();
    private WatchCore core;
    private HttpApi http;
    private RecordFeed applier;

    @BeforeEach
    void start() {
        core = new WatchCore(CoreSettings.of(1000, Duration.ofMinutes(10), 256, "kube-meta"), new FrameEncoder());
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
                        "kube-meta",
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(30),
                        new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3)),
                registry,
                "127.0.0.1",
                0);
        new KubeApi(
                        core,
                        new KubeSettings("/registry", WAIT, 1, "kube-meta"),
                        AccessControl.open("kube-meta", WatchLimits.NONE),
                        null,
                        registry)
                .mountOn(http);
        http.start();
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));
        put("pods/a/web-1", StoredObjects.pod("a", "web-1", "node-2", "Running", "web"));
        put("pods/b/db-0", StoredObjects.pod("b", "db-0", "node-1", "Pending", "db"));
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable s : streams) {
            s.close();
        }
        http.stop();
        core.close();
    }

    private long put(String path, byte[] value) {
        etcd.put("/registry/" + path, value).forEach(applier::accept);
        return etcd.revision();
    }

    private long delete(String path) {
        etcd.delete("/registry/" + path).forEach(applier::accept);
        return etcd.revision();
    }

    private HttpResponse<byte[]> get(String path, String accept) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path))
                        .header("Accept", accept)
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    private static JsonObject json(HttpResponse<byte[]> r) {
        return JsonParser.parseString(new String(r.body(), StandardCharsets.UTF_8))
                .getAsJsonObject();
    }

    /** The typed message of a {@code k8s\0} envelope of {@code kind}. */
    private static byte[] raw(byte[] envelope, String kind) throws Exception {
        assertThat(Arrays.copyOf(envelope, 4)).isEqualTo(new byte[] {'k', '8', 's', 0});
        Runtime.Unknown unknown = Runtime.Unknown.parseFrom(Arrays.copyOfRange(envelope, 4, envelope.length));
        assertThat(unknown.getTypeMeta().getApiVersion()).isEqualTo("meta.k8s.io/v1");
        assertThat(unknown.getTypeMeta().getKind()).isEqualTo(kind);
        return unknown.getRaw().toByteArray();
    }

    @Test
    void aGetAnswersTheObjectsMetadataAloneInJsonAndProtobuf() throws Exception {
        long rev = put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-3", "Running", "web"));

        HttpResponse<byte[]> r = get("/api/v1/namespaces/a/pods/web-0", JSON_ONE);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonObject partial = json(r);
        assertThat(partial.keySet()).containsExactly("kind", "apiVersion", "metadata");
        assertThat(partial.get("kind").getAsString()).isEqualTo("PartialObjectMetadata");
        assertThat(partial.get("apiVersion").getAsString()).isEqualTo("meta.k8s.io/v1");
        JsonObject meta = partial.getAsJsonObject("metadata");
        assertThat(meta.get("name").getAsString()).isEqualTo("web-0");
        assertThat(meta.get("uid").getAsString()).isEqualTo("uid-web-0");
        assertThat(meta.get("resourceVersion").getAsString()).isEqualTo(Long.toString(rev));
        assertThat(meta.getAsJsonObject("labels").get("app").getAsString()).isEqualTo("web");

        r = get("/api/v1/namespaces/a/pods/web-0", PROTOBUF_ONE);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/vnd.kubernetes.protobuf");
        Meta.PartialObjectMetadata decoded =
                Meta.PartialObjectMetadata.parseFrom(raw(r.body(), "PartialObjectMetadata"));
        assertThat(decoded.getMetadata())
                .isEqualTo(StoredObjects.podMessage("a", "web-0", "node-3", "Running", "web").getMetadata().toBuilder()
                        .setResourceVersion(Long.toString(rev))
                        .build());

        // As kube-apiserver: the metadata of one object is not a list, and the other way round.
        r = get("/api/v1/namespaces/a/pods/web-0", JSON_LIST);
        assertThat(r.statusCode()).isEqualTo(406);
        assertThat(json(r).get("message").getAsString())
                .isEqualTo("you requested PartialObjectMetadataList, but the requested object is not a list "
                        + "(*v1.Pod)");
        r = get("/api/v1/pods", JSON_ONE);
        assertThat(r.statusCode()).isEqualTo(406);
        assertThat(json(r).get("message").getAsString())
                .isEqualTo("you requested PartialObjectMetadata, but the requested object is a list (*v1.PodList)");
    }

    @Test
    void listsArePartialObjectMetadataListsPagedAsTheOthers() throws Exception {
        HttpResponse<byte[]> r = get("/api/v1/pods?limit=2", JSON_LIST);
        assertThat(r.statusCode()).isEqualTo(200);
        JsonObject list = json(r);
        assertThat(list.get("kind").getAsString()).isEqualTo("PartialObjectMetadataList");
        assertThat(list.get("apiVersion").getAsString()).isEqualTo("meta.k8s.io/v1");
        JsonObject listMeta = list.getAsJsonObject("metadata");
        assertThat(listMeta.get("resourceVersion").getAsString()).isEqualTo(Long.toString(etcd.revision()));
        String token = listMeta.get("continue").getAsString();
        assertThat(listMeta.get("remainingItemCount").getAsLong()).isEqualTo(1);
        JsonArray items = list.getAsJsonArray("items");
        assertThat(items).hasSize(2);
        JsonObject first = items.get(0).getAsJsonObject();
        assertThat(first.keySet()).containsExactly("kind", "apiVersion", "metadata");
        assertThat(first.get("kind").getAsString()).isEqualTo("PartialObjectMetadata");
        assertThat(first.getAsJsonObject("metadata").get("name").getAsString()).isEqualTo("web-0");

        r = get("/api/v1/pods?limit=2&continue=" + token, PROTOBUF_LIST);
        assertThat(r.statusCode()).isEqualTo(200);
        Meta.PartialObjectMetadataList page =
                Meta.PartialObjectMetadataList.parseFrom(raw(r.body(), "PartialObjectMetadataList"));
        assertThat(page.getItemsList())
                .extracting(i ->
                        i.getMetadata().getNamespace() + "/" + i.getMetadata().getName())
                .containsExactly("b/db-0");
        assertThat(page.getItems(0).getMetadata().getResourceVersion()).isNotEmpty();

        // Selected, as every list is; and kubectl's Table is unchanged.
        r = get("/api/v1/pods?labelSelector=app%3Dweb", PROTOBUF_LIST);
        assertThat(Meta.PartialObjectMetadataList.parseFrom(raw(r.body(), "PartialObjectMetadataList"))
                        .getItemsList())
                .extracting(i -> i.getMetadata().getName())
                .containsExactly("web-0", "web-1");
        r = get("/api/v1/pods", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
        JsonObject table = json(r);
        assertThat(table.get("kind").getAsString()).isEqualTo("Table");
        assertThat(table.getAsJsonArray("rows")
                        .get(0)
                        .getAsJsonObject()
                        .getAsJsonObject("object")
                        .get("kind")
                        .getAsString())
                .isEqualTo("PartialObjectMetadata");
    }

    @Test
    void aCustomResourcesMetadataIsJson() throws Exception {
        put("apiextensions.k8s.io/customresourcedefinitions/widgets.example.com", StoredObjects.widgetDefinition());
        long rev = put("example.com/widgets/b/w1", StoredObjects.widget("b", "w1", 3));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get("/apis/example.com/v1/namespaces/b/widgets/w1", JSON_ONE)
                                .statusCode()
                        == 200);
        // Protobuf is asked first; a custom resource has JSON only here: the client's next choice.
        HttpResponse<byte[]> r = get("/apis/example.com/v1/namespaces/b/widgets/w1", PROTOBUF_ONE);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonObject partial = json(r);
        assertThat(partial.keySet()).containsExactly("kind", "apiVersion", "metadata");
        assertThat(partial.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo(Long.toString(rev));
        JsonObject list = json(get("/apis/example.com/v1/widgets", PROTOBUF_LIST));
        assertThat(list.get("kind").getAsString()).isEqualTo("PartialObjectMetadataList");
        assertThat(list.getAsJsonArray("items")
                        .get(0)
                        .getAsJsonObject()
                        .get("kind")
                        .getAsString())
                .isEqualTo("PartialObjectMetadata");
    }

    @Test
    void watchersOfEachFormShareOneEncodePerEvent() throws Exception {
        long from = etcd.revision();
        List<JsonWatch> json = new ArrayList<>();
        List<ProtobufWatch> protobuf = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            json.add(new JsonWatch("/api/v1/pods?watch=1&resourceVersion=" + from, JSON_ONE));
            protobuf.add(new ProtobufWatch("/api/v1/pods?watch=1&resourceVersion=" + from, PROTOBUF_ONE));
        }
        JsonWatch full = new JsonWatch("/api/v1/pods?watch=1&resourceVersion=" + from, "application/json");
        await().atMost(Duration.ofSeconds(30)).until(() -> core.status().liveWatcherCount() == 7);
        FrameEncoder enc = core.frameEncoder();
        long jsonBefore = enc.encodes(KubeEncodings.METADATA_JSON, FrameKind.EVENT);
        long protobufBefore = enc.encodes(KubeEncodings.METADATA_PROTOBUF, FrameKind.EVENT);

        long modified = put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-3", "Running", "web"));
        long deleted = delete("pods/a/web-1");

        for (JsonWatch w : json) {
            await().atMost(Duration.ofSeconds(30)).until(() -> w.events.size() == 2);
            assertThat(w.summary()).containsExactly("MODIFIED web-0 " + modified, "DELETED web-1 " + deleted);
            assertThat(w.events.get(0).getAsJsonObject("object").keySet())
                    .containsExactly("kind", "apiVersion", "metadata");
        }
        for (ProtobufWatch w : protobuf) {
            await().atMost(Duration.ofSeconds(30)).until(() -> w.events.size() == 2);
            assertThat(w.events).containsExactly("MODIFIED web-0 " + modified, "DELETED web-1 " + deleted);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> full.events.size() == 2);
        assertThat(full.events.get(0).getAsJsonObject("object").get("kind").getAsString())
                .isEqualTo("Pod");
        assertThat(enc.encodes(KubeEncodings.METADATA_JSON, FrameKind.EVENT) - jsonBefore)
                .as("one JSON metadata encode per event for three watchers")
                .isEqualTo(2);
        assertThat(enc.encodes(KubeEncodings.METADATA_PROTOBUF, FrameKind.EVENT) - protobufBefore)
                .as("one protobuf metadata encode per event for three watchers")
                .isEqualTo(2);
    }

    @Test
    void aWatchListSendsTheMetadataThenItsClosingBookmark() throws Exception {
        JsonWatch w = new JsonWatch(
                "/api/v1/namespaces/a/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                        + "&resourceVersionMatch=NotOlderThan",
                JSON_ONE);
        await().atMost(Duration.ofSeconds(30)).until(() -> w.events.size() == 3);
        assertThat(w.events.subList(0, 2))
                .extracting(e -> e.get("type").getAsString()
                        + " "
                        + e.getAsJsonObject("object").get("kind").getAsString())
                .containsExactly("ADDED PartialObjectMetadata", "ADDED PartialObjectMetadata");
        JsonObject bookmark = w.events.get(2);
        assertThat(bookmark.get("type").getAsString()).isEqualTo("BOOKMARK");
        JsonObject object = bookmark.getAsJsonObject("object");
        assertThat(object.get("kind").getAsString()).isEqualTo("PartialObjectMetadata");
        assertThat(object.get("apiVersion").getAsString()).isEqualTo("meta.k8s.io/v1");
        assertThat(object.getAsJsonObject("metadata")
                        .getAsJsonObject("annotations")
                        .get("k8s.io/initial-events-end")
                        .getAsString())
                .isEqualTo("true");

        ProtobufWatch p = new ProtobufWatch(
                "/api/v1/namespaces/a/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                        + "&resourceVersionMatch=NotOlderThan",
                PROTOBUF_ONE);
        await().atMost(Duration.ofSeconds(30)).until(() -> p.events.size() == 3);
        assertThat(p.events.get(2)).startsWith("BOOKMARK ");
    }

    /** A JSON watch read line by line on a thread of its own. */
    private final class JsonWatch implements AutoCloseable {
        final List<JsonObject> events = new CopyOnWriteArrayList<>();
        volatile InputStream body;

        JsonWatch(String path, String accept) {
            Thread t = new Thread(() -> {
                try {
                    HttpResponse<InputStream> r = HTTP.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path))
                                    .header("Accept", accept)
                                    .build(),
                            HttpResponse.BodyHandlers.ofInputStream());
                    body = r.body();
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
                JsonObject meta = e.getAsJsonObject("object").getAsJsonObject("metadata");
                out.add(e.get("type").getAsString() + " " + meta.get("name").getAsString() + " "
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

    /**
     * A protobuf watch read frame by frame (4-byte length, {@code meta.v1.WatchEvent}), each event
     * summed up as "TYPE name resourceVersion" from its decoded PartialObjectMetadata.
     */
    private final class ProtobufWatch implements AutoCloseable {
        final List<String> events = new CopyOnWriteArrayList<>();
        volatile InputStream body;

        ProtobufWatch(String path, String accept) {
            Thread t = new Thread(() -> {
                try {
                    HttpResponse<InputStream> r = HTTP.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path))
                                    .header("Accept", accept)
                                    .build(),
                            HttpResponse.BodyHandlers.ofInputStream());
                    body = r.body();
                    DataInputStream in = new DataInputStream(r.body());
                    while (true) {
                        byte[] frame = new byte[in.readInt()];
                        in.readFully(frame);
                        Meta.WatchEvent event = Meta.WatchEvent.parseFrom(frame);
                        Meta.ObjectMeta meta = Meta.PartialObjectMetadata.parseFrom(
                                        raw(event.getObject().getRaw().toByteArray(), "PartialObjectMetadata"))
                                .getMetadata();
                        events.add(event.getType() + " " + meta.getName() + " " + meta.getResourceVersion());
                    }
                } catch (Exception e) {
                    // closed by the test
                }
            });
            t.setDaemon(true);
            t.start();
            streams.add(this);
        }

        @Override
        public void close() throws java.io.IOException {
            if (body != null) {
                body.close();
            }
        }
    }
}
