package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Invariant 7 (docs/ARCHITECTURE.md) by counts, not time: a client that stops reading costs the node a bounded queue
 * and a cursor whatever its backlog, the frames it never took are released with the history
 * window, and once it has fallen behind the window and cannot even take its 410, its
 * connection is closed after the stalled-close bound.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StalledWatcherTest {
    private static final int WINDOW = 2000;
    private static final int QUEUE = 64;
    private static final int EVENTS = 20_000;

    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    private TestNode node;

    @Test
    void aStalledClientsBacklogCostsABoundedQueueAndItsConnectionEndsOnceItCannotTakeIts410() throws Exception {
        node = nodes.start(WINDOW, QUEUE, Duration.ofMillis(300));
        // The stalled client: a raw socket with a small receive buffer that never reads (JSON).
        Socket stalled = RawHttp.connect(node, 4096);
        RawHttp.sendGet(stalled, "/v1/watch?key=%2F&prefix=true", "");
        InputStream stalledIn = stalled.getInputStream();
        assertThat(RawHttp.readHeaders(stalledIn)).startsWith("HTTP/1.1 200");
        // A fast client on the same node (protobuf), which must get every event meanwhile.
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        InputStream fastIn = http.send(
                        HttpRequest.newBuilder(node.uri("/v1/watch?key=%2F&prefix=true"))
                                .header("Accept", "application/x-protobuf")
                                .build(),
                        HttpResponse.BodyHandlers.ofInputStream())
                .body();
        AtomicLong fastReceived = new AtomicLong();
        AtomicLong fastLastRevision = new AtomicLong(100);
        AtomicReference<String> fastProblem = new AtomicReference<>();
        Thread fast = new Thread(
                () -> {
                    try {
                        WatchEvent e;
                        while (fastReceived.get() < EVENTS && (e = WatchEvent.parseDelimitedFrom(fastIn)) != null) {
                            if (e.getResourceVersion() != fastLastRevision.get() + 1) {
                                fastProblem.compareAndSet(
                                        null,
                                        "revision " + e.getResourceVersion() + " after " + fastLastRevision.get());
                            }
                            fastLastRevision.set(e.getResourceVersion());
                            fastReceived.incrementAndGet();
                        }
                    } catch (IOException e) {
                        fastProblem.compareAndSet(null, e.toString());
                    }
                },
                "fast-reader");
        fast.start();

        String value = "v".repeat(1500);
        long jsonEncodesAtHalf = -1;
        long visitsAtHalf = 0;
        long maxQueued = 0;
        long maxMemoized = 0;
        for (int i = 1; i <= EVENTS; i++) {
            node.feed(node.etcd.put("/k/" + (i % 100), value));
            if (i % 100 == 0) {
                // Keep the fast client within the window (it reads as fast as it can; we only wait).
                int fed = i;
                await().pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(1))
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> fastReceived.get() >= fed - WINDOW / 2 || fastProblem.get() != null);
                maxQueued = Math.max(maxQueued, node.core.status().queuedFrames());
                maxMemoized = Math.max(maxMemoized, node.core.frameEncoder().memoizedFrames());
                assertThat(node.core.status().historySize()).isLessThanOrEqualTo(WINDOW);
            }
            if (i == EVENTS / 2) {
                // By now ~15 MB went to the stalled client: its socket has been full for a long time.
                assertThat(node.core.stats().parked())
                        .as("the stalled client was parked")
                        .isPositive();
                jsonEncodesAtHalf = node.core.frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT);
                visitsAtHalf = node.core.status().watcherVisits();
            }
        }
        fast.join(60_000);
        assertThat(fastProblem.get()).isNull();
        assertThat(fastReceived.get())
                .as("the fast client got every event, in order")
                .isEqualTo(EVENTS);

        long jsonEncodes = node.core.frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT);
        assertThat(jsonEncodes)
                .as("its backlog of the second %d events cost no encode", EVENTS / 2)
                .isEqualTo(jsonEncodesAtHalf);
        assertThat(jsonEncodes)
                .as("it was encoded for only what its socket took")
                .isLessThan(EVENTS / 4);
        assertThat(node.core.status().watcherVisits() - visitsAtHalf)
                .as("dispatch no longer visits it: at most one visit (the fast client) per event")
                .isLessThanOrEqualTo(EVENTS / 2);
        assertThat(maxQueued)
                .as("queued frames stay within the two watchers' bounded queues")
                .isLessThanOrEqualTo(2L * QUEUE + 2);
        assertThat(maxMemoized)
                .as("memoized frames follow the history window (one frame per event and encoding "
                        + "in use), not the backlog")
                .isLessThanOrEqualTo(2L * WINDOW);
        assertThat(node.core.frameEncoder().encodes(WatchEventEncodings.PROTOBUF, FrameKind.EVENT))
                .isEqualTo(EVENTS);
        assertThat(node.core.frameEncoder().memoizedFrames())
                .as("the JSON frames built for the stalled client were released with their events")
                .isLessThanOrEqualTo(WINDOW);

        // It fell behind the window: the tick ends it with 410, which it cannot take (its socket
        // is full), and the connection is closed after the stalled-close bound.
        await().atMost(Duration.ofSeconds(30)).until(() -> node.core.stats().endedExpired() == 1);
        // The connection goes: after the stalled-close bound, or earlier if the kernel reports the
        // full socket as broken; either way the watcher and its queue are gone.
        await().atMost(Duration.ofSeconds(30)).until(() -> node.core.status().watcherCount() == 1);
        assertThat(node.core.stats().closedStalled()).isLessThanOrEqualTo(1);
        assertThat(node.core.status().queuedFrames()).isLessThanOrEqualTo(QUEUE + 1L);
        String tail = readToEnd(stalledIn);
        if (tail.endsWith("0\r\n\r\n")) {
            // The kernel's send buffer had room for the 410 after all (the kernel sizes it, not we):
            // then the stream ends properly with it, and the bound did not cut it.
            assertThat(tail)
                    .as("the stream ended with its 410 and the last chunk")
                    .contains("\"code\":410");
            assertThat(node.core.stats().closedStalled()).isZero();
        } else {
            // Cut by the bound (the socket may have taken part of the ERROR frame, or all of it but not
            // the last chunk), or closed earlier by the kernel: the client sees a broken stream, as from
            // any lost connection.
            assertThat(tail).as("the stream was cut").doesNotEndWith("0\r\n\r\n");
        }
        stalled.close();
        fastIn.close();
    }

    @Test
    void aClientThatTakesItsLastFramesIsNotCutByTheBound() throws Exception {
        node = nodes.start(WINDOW, QUEUE, Duration.ofMillis(300));
        try (Socket s = RawHttp.connect(node, 0)) {
            RawHttp.sendGet(s, "/v1/watch?key=a&timeoutSeconds=1&allowWatchBookmarks=true", "");
            InputStream in = s.getInputStream();
            assertThat(RawHttp.readHeaders(in)).startsWith("HTTP/1.1 200");
            String chunk;
            String last = null;
            while ((chunk = RawHttp.readChunk(in)) != null) {
                last = chunk;
            }
            assertThat(last).as("the final bookmark").contains("\"BOOKMARK\"");
        }
        assertThat(node.core.stats().closedStalled()).isZero();
    }

    /** The last 4 KiB of what the socket still delivers, until the node's close shows as EOF or a reset. */
    private static String readToEnd(InputStream in) {
        StringBuilder sb = new StringBuilder();
        byte[] buf = new byte[65536];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                sb.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
                if (sb.length() > 4096) {
                    sb.delete(0, sb.length() - 4096);
                }
            }
        } catch (IOException e) {
            // a reset is a close too
        }
        return sb.toString();
    }
}
