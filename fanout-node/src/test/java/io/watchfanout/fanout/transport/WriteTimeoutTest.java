package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.watchfanout.fanout.watch.CloseReason;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The write timeout tells a dead client from a slow one by write progress, not by backlog:
 * on one node, a client that takes no bytes at all is closed and its watcher removed, while a
 * client reading far slower than the events arrive is parked, keeps its stream, and catches up
 * on every event once it reads faster.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteTimeoutTest {
    private static final int QUEUE = 64;
    private static final int EVENTS = 3000;
    /** Holds every event fed, so the slow client's backlog stays resumable (no 410). */
    private static final int WINDOW = 2 * EVENTS;

    private static final Pattern RESOURCE_VERSION = Pattern.compile("\"resourceVersion\":\"(\\d+)\"");

    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    @Test
    void aClientThatTakesNoBytesIsClosedAndASlowReaderIsParkedAndKeepsItsStream() throws Exception {
        // The slow client makes progress every few milliseconds, far within this timeout.
        TestNode node = nodes.start(
                WINDOW,
                QUEUE,
                Duration.ofSeconds(3),
                new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3),
                "127.0.0.1");
        Socket dead = RawHttp.connect(node, 4096);
        RawHttp.sendGet(dead, "/v1/watch?key=%2F&prefix=true", "");
        assertThat(RawHttp.readHeaders(dead.getInputStream())).startsWith("HTTP/1.1 200");
        // Small receive buffer: the node's socket fills soon and the slow client gets parked.
        Socket slow = RawHttp.connect(node, 32 * 1024);
        RawHttp.sendGet(slow, "/v1/watch?key=%2F&prefix=true", "");
        Throttled slowIn = new Throttled(slow.getInputStream());
        assertThat(RawHttp.readHeaders(slowIn)).startsWith("HTTP/1.1 200");
        await().atMost(Duration.ofSeconds(10)).until(() -> node.core.status().watcherCount() == 2);

        AtomicLong lastRevision = new AtomicLong(100);
        AtomicReference<String> problem = new AtomicReference<>();
        Thread reader = new Thread(
                () -> {
                    try {
                        String chunk;
                        while (lastRevision.get() < 100 + EVENTS && (chunk = RawHttp.readChunk(slowIn)) != null) {
                            Matcher m = RESOURCE_VERSION.matcher(chunk);
                            while (m.find()) {
                                long rv = Long.parseLong(m.group(1));
                                if (rv != lastRevision.get() + 1) {
                                    problem.compareAndSet(null, "revision " + rv + " after " + lastRevision.get());
                                }
                                lastRevision.set(rv);
                            }
                        }
                    } catch (IOException e) {
                        problem.compareAndSet(null, e.toString());
                    }
                },
                "slow-reader");
        reader.start();

        String value = "v".repeat(1500);
        for (int i = 1; i <= EVENTS; i++) {
            node.feed(node.etcd.put("/k/" + (i % 100), value));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> node.core.stats().closed(CloseReason.WRITE_TIMEOUT) == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> node.core.status().watcherCount() == 1);
        assertThat(node.core.stats().parked()).as("both clients were parked").isGreaterThanOrEqualTo(2);

        slowIn.fast = true;
        reader.join(60_000);
        assertThat(problem.get()).isNull();
        assertThat(lastRevision.get())
                .as("the slow client got every event, in order")
                .isEqualTo(100 + EVENTS);
        await().atMost(Duration.ofSeconds(10)).until(() -> node.core.stats().unparked() >= 1);
        assertThat(node.core.stats().closed(CloseReason.WRITE_TIMEOUT))
                .as("only the client that took nothing")
                .isEqualTo(1);
        assertThat(node.core.stats().closed(CloseReason.CONNECTION_ERROR)).isZero();
        assertThat(node.core.stats().closed(CloseReason.CLIENT_CLOSED)).isZero();
        assertThat(node.core.status().watcherCount())
                .as("the slow client's watcher is still registered")
                .isEqualTo(1);
        assertThat(node.registry.getSampleValue(
                        "watchfanout_watchers_closed_total", new String[] {"reason"}, new String[] {"write_timeout"}))
                .isEqualTo(1.0);
        assertThat(node.registry.getSampleValue(
                        "watchfanout_watchers", new String[] {"encoding"}, new String[] {"json"}))
                .isEqualTo(1.0);
        dead.close();
        slow.close();
    }

    /** Reads at most 1 KiB per call and sleeps 5 ms before each, until {@link #fast} is set. */
    private static final class Throttled extends FilterInputStream {
        volatile boolean fast;

        Throttled(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (fast) {
                return super.read(b, off, len);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            return super.read(b, off, Math.min(len, 1024));
        }
    }
}
