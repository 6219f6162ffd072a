package io.watchfanout.fanout.v1;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.Frames.SseEvent;
import io.watchfanout.fanout.transport.TestNode;
import io.watchfanout.fanout.transport.TestNodes;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Server-Sent Events watch streams (README.md, "The watch protocol") against a real HTTP client. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SseWatchTest {
    private static final String SSE = "text/event-stream";
    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    private TestNode node;

    private HttpResponse<InputStream> stream(String pathAndQuery, String accept, String lastEventId) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(node.uri(pathAndQuery)).header("Accept", accept);
        if (lastEventId != null) {
            b.header("Last-Event-ID", lastEventId);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    /** Reads the SSE events of a stream, as an EventSource would, keeping the last id. */
    private static final class EventStream implements AutoCloseable {
        private final BufferedReader in;
        String lastEventId;

        EventStream(InputStream body) {
            in = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        }

        /** The reconnection delay of the stream's {@code retry:} block, once read; null before. */
        String retry;

        SseEvent next() throws IOException {
            StringBuilder block = new StringBuilder();
            String line;
            while ((line = in.readLine()) != null && !line.isEmpty()) {
                block.append(block.length() == 0 ? "" : "\n").append(line);
            }
            assertThat(line).as("stream ended early").isNotNull();
            if (block.toString().startsWith("retry: ")) {
                // The stream's first block: it sets the reconnection delay and dispatches no event.
                assertThat(retry).as("one retry block, first").isNull();
                retry = block.substring(7);
                return next();
            }
            SseEvent e = Frames.parseSse(block.toString());
            if (e.id() != null) {
                lastEventId = e.id();
            }
            return e;
        }

        /** The next event that is not a BOOKMARK. */
        SseEvent nextEvent() throws IOException {
            SseEvent e;
            do {
                e = next();
            } while (e.frame().getType() == WatchEvent.Type.BOOKMARK);
            return e;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    @Test
    void anEventStreamCarriesIdsOnlyWhereResumingIsSafe() throws Exception {
        node = nodes.start(1000, 256, true);
        HttpResponse<InputStream> r = stream("/v1/watch?key=%2Fa%2F&prefix=true&allowWatchBookmarks=true", SSE, null);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue(SSE);
        assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-cache");
        node.feed(node.etcd.put("/a/1", "x"));
        node.feed(node.etcd.txn(
                EtcdLog.Op.put("/a/x", "1"),
                EtcdLog.Op.put("/c/y", "2"),
                EtcdLog.Op.put("/a/z", "3"),
                EtcdLog.Op.put("/c/w", "4")));
        node.feed(node.etcd.txn(EtcdLog.Op.put("/a/p", "1"), EtcdLog.Op.put("/c/q", "2")));
        node.feed(node.etcd.progress());
        long progress = node.etcd.revision();
        try (EventStream events = new EventStream(r.body())) {
            SseEvent single = events.nextEvent();
            assertThat(events.retry)
                    .as("the stream opens with the reconnection delay: Retry-After")
                    .isEqualTo("1000");
            assertThat(single.id()).isEqualTo("101");
            assertThat(single.event()).isEqualTo("ADDED");
            assertThat(single.frame().getObject().getValue().toStringUtf8()).isEqualTo("x");
            SseEvent first = events.nextEvent();
            assertThat(first.frame().getObject().getKey().toStringUtf8()).isEqualTo("/a/x");
            assertThat(first.id()).as("inside the revision: no resume point").isNull();
            assertThat(events.lastEventId)
                    .as("an EventSource keeps the previous revision's id")
                    .isEqualTo("101");
            SseEvent last = events.nextEvent();
            assertThat(last.frame().getObject().getKey().toStringUtf8()).isEqualTo("/a/z");
            assertThat(last.frame().getIndex())
                    .as("not the revision's last event, but this watcher's")
                    .isEqualTo(2);
            assertThat(last.id()).isEqualTo("102");
            SseEvent partial = events.nextEvent();
            assertThat(partial.frame().getIndex()).isEqualTo(0);
            assertThat(partial.frame().getCount()).isEqualTo(2);
            assertThat(partial.id())
                    .as("the only frame this watcher gets of revision 103")
                    .isEqualTo("103");
            SseEvent bookmark;
            do {
                bookmark = events.next();
            } while (bookmark.frame().getResourceVersion() < progress);
            assertThat(bookmark.event()).isEqualTo("BOOKMARK");
            assertThat(bookmark.id()).isEqualTo(Long.toString(progress));
        }
    }

    @Test
    void lastEventIdResumesLikeResourceVersionAndWinsOverTheUrl() throws Exception {
        node = nodes.start(1000, 256, true);
        node.feed(node.etcd.put("/k/1", "v"));
        node.feed(node.etcd.txn(EtcdLog.Op.put("/k/2", "v"), EtcdLog.Op.put("/k/3", "v")));
        node.feed(node.etcd.put("/k/4", "v"));
        long id = node.etcd.revision() - 1;
        // An EventSource reconnecting: the URL still says where the first connection started
        // (with the initial list), the header where the client got to.
        HttpResponse<InputStream> r = stream(
                "/v1/watch?key=%2Fk%2F&prefix=true&resourceVersion=100" + "&sendInitialEvents=true",
                SSE, Long.toString(id));
        assertThat(r.statusCode()).isEqualTo(200);
        node.feed(node.etcd.put("/k/5", "v"));
        try (EventStream events = new EventStream(r.body())) {
            SseEvent e4 = events.nextEvent();
            assertThat(e4.frame().getObject().getKey().toStringUtf8())
                    .as("no initial events, nothing <= the id")
                    .isEqualTo("/k/4");
            assertThat(e4.id()).isEqualTo(Long.toString(id + 1));
            assertThat(events.nextEvent().frame().getObject().getKey().toStringUtf8())
                    .isEqualTo("/k/5");
        }
        // Resuming from the id before a revision delivers that revision whole.
        HttpResponse<InputStream> again = stream("/v1/watch?key=%2Fk%2F&prefix=true", SSE, "101");
        try (EventStream events = new EventStream(again.body())) {
            SseEvent a = events.nextEvent();
            SseEvent b = events.nextEvent();
            assertThat(List.of(
                            a.frame().getObject().getKey().toStringUtf8(),
                            b.frame().getObject().getKey().toStringUtf8()))
                    .containsExactly("/k/2", "/k/3");
            assertThat(a.id()).isNull();
            assertThat(b.id()).isEqualTo("102");
        }
        // Other encodings resume by resourceVersion alone.
        HttpResponse<InputStream> json =
                stream("/v1/watch?key=%2Fk%2F&prefix=true&resourceVersion=100", "application/json", "104");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(json.body(), StandardCharsets.UTF_8))) {
            assertThat(Frames.parseJsonLine(in.readLine()).getResourceVersion()).isEqualTo(101);
        }
        HttpResponse<String> bad = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=a"))
                        .header("Accept", SSE)
                        .header("Last-Event-ID", "abc")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(bad.statusCode()).isEqualTo(400);
        Status s = Frames.parseStatus(bad.body());
        assertThat(s.getReason()).isEqualTo("BadRequest");
        assertThat(s.getMessage()).contains("Last-Event-ID", "\"abc\"", "expected");
        HttpResponse<String> twice = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=a"))
                        .header("Accept", SSE)
                        .header("Last-Event-ID", "101")
                        .header("Last-Event-ID", "102")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(twice.statusCode()).isEqualTo(400);
        assertThat(Frames.parseStatus(twice.body()).getMessage()).contains("Last-Event-ID given 2 times");
    }

    @Test
    void aLastEventIdOlderThanTheHistoryIsAnErrorFrameInA200StreamThatAPageCanRead() throws Exception {
        node = nodes.start(3, 256, true);
        for (int i = 0; i < 10; i++) {
            node.feed(node.etcd.put("/k/" + i, "v"));
        }
        HttpResponse<String> r = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=%2Fk%2F&prefix=true"))
                        .header("Accept", SSE)
                        .header("Last-Event-ID", "101")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue(SSE);
        assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-cache");
        String[] blocks = r.body().split("\n\n", -1);
        assertThat(blocks).as("retry, ERROR, end: %s", r.body()).hasSize(3);
        assertThat(blocks[0]).isEqualTo("retry: 1000");
        SseEvent error = Frames.parseSse(blocks[1]);
        assertThat(error.event()).isEqualTo("ERROR");
        assertThat(error.id()).as("no resume point").isNull();
        assertThat(error.frame().getStatus().getCode()).isEqualTo(410);
        assertThat(error.frame().getStatus().getReason()).isEqualTo("Expired");
        assertThat(blocks[2]).isEmpty();
        // The same from the URL's resourceVersion; other encodings keep the HTTP status.
        HttpResponse<String> url = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=%2Fk%2F&prefix=true" + "&resourceVersion=101"))
                        .header("Accept", SSE)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(url.statusCode()).isEqualTo(200);
        assertThat(Frames.parseSse(url.body().split("\n\n")[1])
                        .frame()
                        .getStatus()
                        .getReason())
                .isEqualTo("Expired");
        for (String accept : List.of("application/json", "application/x-protobuf")) {
            HttpResponse<String> plain = client.send(
                    HttpRequest.newBuilder(node.uri("/v1/watch?key=%2Fk%2F&prefix=true" + "&resourceVersion=101"))
                            .header("Accept", accept)
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(plain.statusCode()).as(accept).isEqualTo(410);
            assertThat(Frames.parseStatus(plain.body()).getReason()).isEqualTo("Expired");
        }
    }

    @Test
    void notReadyAndTimeoutAreErrorFramesWithRetryAfterButMalformedRequestsStayPlainErrors() throws Exception {
        node = nodes.start(1000, 256, false);
        HttpResponse<String> notReady = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=a"))
                        .header("Accept", SSE)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(notReady.statusCode()).isEqualTo(200);
        assertThat(notReady.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(notReady.body()).startsWith("retry: 1000\n\n");
        assertThat(Frames.parseSse(notReady.body().split("\n\n")[1])
                        .frame()
                        .getStatus()
                        .getReason())
                .isEqualTo("NotReady");
        HttpResponse<String> malformed = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=a&resourceVersion=x"))
                        .header("Accept", SSE)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(malformed.statusCode())
                .as("a bad parameter is the request's to fix, even on a node not ready")
                .isEqualTo(400);
        assertThat(Frames.parseStatus(malformed.body()).getReason()).isEqualTo("BadRequest");
        HttpResponse<String> json = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=a"))
                        .header("Accept", "application/json")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(json.statusCode()).isEqualTo(503);
        node.core.feed().markReady();
        HttpResponse<String> ahead = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=a&resourceVersion=999"))
                        .header("Accept", SSE)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(ahead.statusCode()).isEqualTo(200);
        assertThat(ahead.headers().firstValue("Retry-After")).hasValue("1");
        SseEvent timeout = Frames.parseSse(ahead.body().split("\n\n")[1]);
        assertThat(timeout.event()).isEqualTo("ERROR");
        assertThat(timeout.frame().getStatus().getCode()).isEqualTo(504);
        assertThat(timeout.frame().getStatus().getReason()).isEqualTo("Timeout");
    }

    @Test
    void eachEventIsEncodedOnceForEverySseWatcherAndTheDataIsTheJsonFrame() throws Exception {
        node = nodes.start(1000, 256, true);
        List<EventStream> sse = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sse.add(new EventStream(
                    stream("/v1/watch?key=%2F&prefix=true", SSE, null).body()));
        }
        HttpResponse<InputStream> jsonStream = stream("/v1/watch?key=%2F&prefix=true", "application/json", null);
        BufferedReader json = new BufferedReader(new InputStreamReader(jsonStream.body(), StandardCharsets.UTF_8));
        int events = 0;
        for (int i = 0; i < 20; i++) {
            node.feed(node.etcd.put("/k/" + (i % 7), "v" + i));
            events++;
        }
        node.feed(node.etcd.txn(EtcdLog.Op.put("/t/1", "1"), EtcdLog.Op.delete("/k/1")));
        events += 2;
        List<WatchEvent> jsonFrames = new ArrayList<>();
        for (int i = 0; i < events; i++) {
            jsonFrames.add(Frames.parseJsonLine(json.readLine()));
        }
        for (EventStream s : sse) {
            for (int i = 0; i < events; i++) {
                assertThat(s.nextEvent().frame()).isEqualTo(jsonFrames.get(i));
            }
            s.close();
        }
        json.close();
        assertThat(node.core.frameEncoder().encodes(WatchEventEncodings.SSE, FrameKind.EVENT))
                .isEqualTo(events);
        assertThat(node.core.frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT))
                .isEqualTo(events);
        assertThat(node.core.stats().framesDelivered(WatchEventEncodings.SSE)).isGreaterThanOrEqualTo(5L * events);
        String metrics = client.send(
                        HttpRequest.newBuilder(node.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(metrics)
                .contains("watchfanout_frames_encoded_total{encoding=\"sse\",kind=\"event\",} " + events + ".0");
    }

    @Test
    void listsAreNotOfferedAsEventStreams() throws Exception {
        node = nodes.start(1000, 256, true);
        HttpResponse<String> r = client.send(
                HttpRequest.newBuilder(node.uri("/v1/kv?key=a"))
                        .header("Accept", SSE)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(406);
        assertThat(Frames.parseStatus(r.body()).getMessage()).contains("text/event-stream", "application/json");
    }
}
