package io.watchfanout.fanout.transport;

import io.watchfanout.common.tls.ServerTls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts {@link TestNode}s for a test and stops them after it:
 * {@code @RegisterExtension final TestNodes nodes = new TestNodes();}.
 */
public final class TestNodes implements AfterEachCallback {
    private final List<TestNode> started = new ArrayList<>();

    /** A node with the given history, queue and readiness (see {@link TestNode}). */
    public TestNode start(int historyMaxEvents, int queueFrames, boolean ready) {
        return keep(new TestNode(historyMaxEvents, queueFrames, ready));
    }

    /** A ready node whose ended streams are closed after {@code stalledCloseAfter}. */
    TestNode start(int historyMaxEvents, int queueFrames, Duration stalledCloseAfter) {
        return keep(new TestNode(historyMaxEvents, queueFrames, true, stalledCloseAfter));
    }

    /** A ready node with the given write timeout, keepalive timings and listen address (200 ms bookmarks). */
    TestNode start(
            int historyMaxEvents, int queueFrames, Duration writeTimeout, TcpKeepalive keepalive, String bindAddress) {
        return start(historyMaxEvents, queueFrames, writeTimeout, keepalive, bindAddress, Duration.ofMillis(200));
    }

    /** A ready node with the given write timeout, keepalive timings, listen address and bookmark interval. */
    TestNode start(
            int historyMaxEvents,
            int queueFrames,
            Duration writeTimeout,
            TcpKeepalive keepalive,
            String bindAddress,
            Duration bookmarkInterval) {
        return keep(new TestNode(
                historyMaxEvents,
                queueFrames,
                true,
                Duration.ofSeconds(30),
                writeTimeout,
                keepalive,
                bindAddress,
                bookmarkInterval,
                CorsOrigins.NONE,
                null));
    }

    /** A ready node (as {@link #start(int, int, boolean)}) whose API pages of {@code origins} may read. */
    TestNode startWithCors(CorsOrigins origins) {
        return startReady(origins, null);
    }

    /** A ready node (as {@link #start(int, int, boolean)}) over HTTPS with {@code tls}. */
    TestNode startWithTls(ServerTls tls) {
        return startReady(CorsOrigins.NONE, tls);
    }

    private TestNode startReady(CorsOrigins origins, ServerTls tls) {
        return keep(new TestNode(
                1000,
                256,
                true,
                Duration.ofSeconds(30),
                Duration.ofMinutes(10),
                new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3),
                "127.0.0.1",
                Duration.ofMillis(200),
                origins,
                tls));
    }

    private TestNode keep(TestNode node) {
        started.add(node);
        return node;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        for (TestNode node : started) {
            node.close();
        }
        started.clear();
    }
}
