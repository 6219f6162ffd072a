package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.watchfanout.fanout.testing.NodeApps;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A page in headless Chromium, served from another origin than the nodes', watches a prefix with
 * {@code EventSource} (README.md, "Browsers"): it lists through {@code fetch}, watches node A,
 * moves to node B with the last event id as {@code resourceVersion} when A is SIGKILLed, and sees
 * every event exactly once; Chromium's own reconnection (same URL, {@code Last-Event-ID}) after
 * streams that end loses and repeats nothing; a watch from before the nodes' history shows the
 * 410 {@code ERROR} event that the node sends inside a 200 stream. Everything cross-origin works
 * only because the nodes answer with CORS headers for the page's origin
 * ({@code --cors-allowed-origins}).
 *
 * <p>Drives the system's Chromium ({@code /usr/bin/chromium}) with {@code playwright-core},
 * installed by {@code npm ci} from the lock file in {@code src/test/node/browser}.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class BrowserWatchTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    BrowserWatchTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void aPageWatchesThroughEventSourceMovesToAnotherNodeWithItsLastIdAndShowsErrorFrames(TestInfo info)
            throws Exception {
        Path app = installDriver();
        String topicPrefix = TopicPrefixes.unique(info);
        String p = "/" + topicPrefix + "/";
        HttpServer pages = servePages(app);
        String pageOrigin = "http://127.0.0.1:" + pages.getAddress().getPort();
        Path out = app.resolve("out-" + topicPrefix + ".txt");
        try (Client client = Client.builder().endpoints(etcd.clientUrl()).build()) {
            KV kv = client.getKVClient();
            // Written before the ingester starts, which publishes no history (--initial-history-revisions 0):
            // the nodes' history begins after it, so a watch from revision 1 is older than their history
            // whatever ran on this etcd before.
            kv.put(bs(p + "before"), bs("0")).get();
            try (JavaProcess ingester = Stack.ingester(
                            etcd.clientUrl(),
                            kafka.bootstrapServers(),
                            topicPrefix,
                            "--initial-history-revisions",
                            "0");
                    Stack.Node a = Stack.node(
                            "browser-a", kafka.bootstrapServers(), topicPrefix, "--cors-allowed-origins", pageOrigin);
                    Stack.Node b = Stack.node(
                            "browser-b",
                            kafka.bootstrapServers(),
                            topicPrefix,
                            "--cors-allowed-origins",
                            "https://unrelated.test," + pageOrigin)) {
                Process browser = new ProcessBuilder("node", "drive.js")
                        .directory(app.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(out.toFile())
                        .start();
                try (OutputStream commands = browser.getOutputStream()) {
                    await().atMost(WAIT).until(() -> Files.readString(out).contains("BROWSER READY"));
                    Map<String, String> values = new HashMap<>();
                    List<String> expected = new ArrayList<>();
                    String page = pageOrigin + "/watch.html?nodes=" + a.url() + "," + b.url() + "&key="
                            + URLEncoder.encode(p, StandardCharsets.UTF_8);
                    send(commands, "open main " + page);
                    await().atMost(WAIT)
                            .untilAsserted(() ->
                                    assertThat(lines(out, "main", "CONNECTED")).isNotEmpty());
                    JsonObject list = lines(out, "main", "LIST").get(0);
                    assertThat(list.get("keys").getAsJsonArray().get(0).getAsString())
                            .isEqualTo(p + "before");
                    assertThat(list.get("node").getAsInt()).isZero();

                    // Events through node A: puts, a transaction of two events in one revision, a delete.
                    for (int i = 0; i < 5; i++) {
                        put(kv, p + "k" + i, "a" + i, values, expected);
                    }
                    long txn = kv.txn()
                            .Then(
                                    Op.put(bs(p + "t1"), bs("x"), PutOption.DEFAULT),
                                    Op.put(bs(p + "k0"), bs("t"), PutOption.DEFAULT))
                            .commit()
                            .get()
                            .getHeader()
                            .getRevision();
                    expected.add("ADDED " + p + "t1 x " + txn);
                    expected.add("MODIFIED " + p + "k0 t " + txn);
                    values.put(p + "t1", "x");
                    values.put(p + "k0", "t");
                    delete(kv, p + "k1", values, expected);
                    int throughA = expected.size();
                    await().atMost(WAIT)
                            .untilAsserted(() -> assertThat(events(out)).hasSize(throughA));
                    assertThat(lines(out, "main", null))
                            .filteredOn(o -> isEvent(o))
                            .allMatch(o -> o.get("node").getAsInt() == 0);

                    // Node A dies; events written meanwhile reach the page through node B, from its last id.
                    a.process().kill();
                    for (int i = 5; i < 8; i++) {
                        put(kv, p + "k" + i, "b" + i, values, expected);
                    }
                    await().atMost(WAIT)
                            .untilAsserted(() -> assertThat(lines(out, "main", "CONNECTED"))
                                    .anyMatch(o -> o.get("node").getAsInt() == 1));
                    JsonObject moved = lines(out, "main", "SWITCH").get(0);
                    assertThat(moved.get("to").getAsInt()).isEqualTo(1);
                    put(kv, p + "k2", "later", values, expected);
                    delete(kv, p + "k3", values, expected);
                    await().atMost(WAIT)
                            .untilAsserted(() -> assertThat(events(out)).hasSize(expected.size()));
                    assertThat(events(out))
                            .as("every event exactly once, in order")
                            .isEqualTo(expected);
                    assertThat(lines(out, "main", "WATCH"))
                            .last()
                            .satisfies(w -> assertThat(w.get("resourceVersion").getAsString())
                                    .isEqualTo(moved.get("lastEventId").getAsString()));
                    assertThat(lines(out, "main", "UNNAMED"))
                            .as("frames are named events only")
                            .isEmpty();
                    assertThat(lines(out, "main", "ERROR")).isEmpty();

                    // The EventSource's own reconnection: each stream ends after 1 s and Chromium reopens the
                    // same URL (whose resourceVersion is the first one) with Last-Event-ID, across origins.
                    send(
                            commands,
                            "open native " + pageOrigin + "/watch.html?native=1&extra=timeoutSeconds%3D1&nodes="
                                    + b.url() + "&key=" + URLEncoder.encode(p, StandardCharsets.UTF_8));
                    await().atMost(WAIT)
                            .untilAsserted(() -> assertThat(lines(out, "native", "CONNECTED"))
                                    .hasSizeGreaterThan(1));
                    List<String> nativeExpected = new ArrayList<>();
                    for (int i = 0; i < 2; i++) {
                        int connections = lines(out, "native", "CONNECTED").size();
                        put(kv, p + "n" + i, "r" + i, values, nativeExpected);
                        await().atMost(WAIT)
                                .until(() -> lines(out, "native", "CONNECTED").size() > connections + 1);
                    }
                    assertThat(events(out, "native"))
                            .as("once each across reconnections")
                            .isEqualTo(nativeExpected);
                    assertThat(lines(out, "native", "RECONNECTING")).isNotEmpty();

                    // A watch from before the nodes' history: the ERROR event, readable inside a 200.
                    send(
                            commands,
                            "open old " + pageOrigin + "/watch.html?nodes=" + b.url() + "&rv=1&key="
                                    + URLEncoder.encode(p, StandardCharsets.UTF_8));
                    await().atMost(WAIT)
                            .untilAsserted(
                                    () -> assertThat(lines(out, "old", "ERROR")).isNotEmpty());
                    JsonObject error = lines(out, "old", "ERROR").get(0);
                    assertThat(error.get("code").getAsInt()).isEqualTo(410);
                    assertThat(error.get("reason").getAsString()).isEqualTo("Expired");
                    assertThat(lines(out, "old", "SWITCH"))
                            .as("the page closed it: no reconnection")
                            .isEmpty();
                    send(commands, "quit");
                } finally {
                    browser.waitFor(20, TimeUnit.SECONDS);
                    browser.destroyForcibly();
                    browser.waitFor(10, TimeUnit.SECONDS);
                }
                assertThat(Files.readString(out))
                        .doesNotContain("PAGEERROR", "GOTOERROR", "LISTFAILED", "BROWSER FAILED");
                assertThat(ingester.isAlive()).isTrue();
            }
        } finally {
            pages.stop(0);
        }
    }

    private static boolean isEvent(JsonObject o) {
        String t = o.get("type").getAsString();
        return t.equals("ADDED") || t.equals("MODIFIED") || t.equals("DELETED");
    }

    private static void put(KV kv, String key, String value, Map<String, String> values, List<String> expected)
            throws Exception {
        long rev = kv.put(bs(key), bs(value)).get().getHeader().getRevision();
        expected.add((values.containsKey(key) ? "MODIFIED " : "ADDED ") + key + " " + value + " " + rev);
        values.put(key, value);
    }

    /** A DELETED frame's object is the key-value before the delete. */
    private static void delete(KV kv, String key, Map<String, String> values, List<String> expected) throws Exception {
        long rev = kv.delete(bs(key)).get().getHeader().getRevision();
        expected.add("DELETED " + key + " " + values.remove(key) + " " + rev);
    }

    /** The main tab's events, as "TYPE key value revision". */
    private static List<String> events(Path out) throws IOException {
        return events(out, "main");
    }

    /** A tab's events, as "TYPE key value revision". */
    private static List<String> events(Path out, String tab) throws IOException {
        return lines(out, tab, null).stream()
                .filter(BrowserWatchTest::isEvent)
                .map(o -> o.get("type").getAsString() + " " + o.get("key").getAsString() + " "
                        + o.get("value").getAsString() + " "
                        + o.get("resourceVersion").getAsString())
                .toList();
    }

    /** The JSON lines a tab logged, of one type or (null) all. */
    private static List<JsonObject> lines(Path out, String tab, String type) throws IOException {
        try (Stream<String> lines = Files.lines(out)) {
            return lines.filter(l -> l.startsWith(tab + " {"))
                    .map(l -> JsonParser.parseString(l.substring(tab.length() + 1))
                            .getAsJsonObject())
                    .filter(o -> type == null || o.get("type").getAsString().equals(type))
                    .toList();
        }
    }

    private static void send(OutputStream commands, String line) throws IOException {
        commands.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        commands.flush();
    }

    /** The page's own origin: an HTTP server on another port than the nodes'. */
    private static HttpServer servePages(Path app) throws IOException {
        byte[] html = Files.readAllBytes(app.resolve("watch.html"));
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/watch.html", exchange -> {
            exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
            exchange.sendResponseHeaders(200, html.length);
            try (OutputStream body = exchange.getResponseBody()) {
                body.write(html);
            }
        });
        server.start();
        return server;
    }

    /** {@code npm ci} of the pinned playwright-core into target/, once per build (it downloads no browser). */
    private static Path installDriver() throws Exception {
        return NodeApps.install(
                "browser", "playwright-core", List.of("package.json", "package-lock.json", "drive.js", "watch.html"));
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
