package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.watch.CloseReason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Clients that vanish without a FIN are freed: three watch clients run in a network namespace
 * of their own, joined to the node by a veth pair, and the pair is deleted under them (as when
 * a pod's namespace goes), so neither their FIN nor anything else reaches the node again. The
 * quiet watch (no events, no bookmarks: nothing to send) is freed by TCP keepalive, the busy
 * one (events keep coming, its socket fills) by the write timeout, and the quiet watch with
 * bookmarks (a few bytes every interval: always some unacknowledged, so no keepalive probes,
 * and never enough to fill the socket) by the sweeper of unacknowledged connections; all three
 * watchers leave the node and each is counted under its reason.
 *
 * <p>Needs root and {@code ip netns}; skipped otherwise. Every address is inside
 * 10.200.N.0/30 on the veth pair this test creates, and a blackhole route for 10.200.N.0/24
 * stands while it runs, so nothing meant for the vanished client can leave the machine by the
 * default route once the pair is gone.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class VanishedClientTest {
    private static final long PID = ProcessHandle.current().pid();
    private static final String NS = "wfka" + PID;
    private static final String HOST_IF = "wfka" + PID + "h";
    private static final String CLIENT_IF = "wfka" + PID + "c";
    private static final String SUBNET = "10.200." + (PID % 250) + ".";
    private static final String NODE_ADDRESS = SUBNET + "1";
    private static final String CLIENT_ADDRESS = SUBNET + "2";
    private static final String BLACKHOLE = SUBNET + "0/24";

    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    private final List<Process> clients = new ArrayList<>();
    private boolean routeAdded;

    @BeforeEach
    void createNamespace() throws Exception {
        assumeTrue(run("id", "-u").trim().equals("0"), "needs root (ip netns, veth)");
        cleanUp();
        assumeTrue(tryRun("ip", "netns", "add", NS), "ip netns is not available here");
        routeAdded = tryRun("ip", "route", "add", "blackhole", BLACKHOLE);
        assumeTrue(routeAdded, BLACKHOLE + " is routed on this machine already; not touching it");
        sh("ip", "link", "add", HOST_IF, "type", "veth", "peer", "name", CLIENT_IF, "netns", NS);
        sh("ip", "addr", "add", NODE_ADDRESS + "/30", "dev", HOST_IF);
        sh("ip", "link", "set", HOST_IF, "up");
        sh("ip", "-n", NS, "addr", "add", CLIENT_ADDRESS + "/30", "dev", CLIENT_IF);
        sh("ip", "-n", NS, "link", "set", CLIENT_IF, "up");
        sh("ip", "-n", NS, "link", "set", "lo", "up");
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (Process p : clients) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        clients.clear();
        tryRun("ip", "link", "del", HOST_IF);
        tryRun("ip", "netns", "del", NS);
        if (routeAdded) {
            tryRun("ip", "route", "del", "blackhole", BLACKHOLE);
            routeAdded = false;
        }
    }

    @Test
    void quietBookmarkedAndBusyWatchersOfClientsThatVanishedWithoutAFinAreFreed() throws Exception {
        // Bookmarks more often than keepalive would probe (1 s idle): the bookmarked connection
        // always has a bookmark in flight once its client is gone.
        TestNode node = nodes.start(
                10_000,
                64,
                Duration.ofSeconds(2),
                new TcpKeepalive(Duration.ofSeconds(1), Duration.ofSeconds(1), 2),
                NODE_ADDRESS,
                Duration.ofMillis(400));
        int port = node.api.port();
        watchFromNamespace(port, "/v1/watch?key=/quiet");
        watchFromNamespace(port, "/v1/watch?key=/busy/&prefix=true");
        watchFromNamespace(port, "/v1/watch?key=/bookmarked&allowWatchBookmarks=true");
        await().atMost(Duration.ofSeconds(30)).until(() -> node.core.status().watcherCount() == 3);
        await().atMost(Duration.ofSeconds(30)).until(() -> node.api.sweeper().registered() == 3);

        Thread feeder = new Thread(
                () -> {
                    String value = "v".repeat(1000);
                    for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
                        node.feed(node.etcd.put("/busy/" + (i % 50), value));
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "busy-feeder");
        feeder.start();
        try {
            // The busy client reads: frames reach it across the pair. The bookmarked one gets its
            // bookmarks, and live clients acknowledge them: well over the write timeout passes
            // without the sweeper closing anything.
            long delivered = node.core.stats().framesDelivered(WatchEventEncodings.JSON);
            long bookmarks = node.core.stats().bookmarksSent();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> node.core.stats().framesDelivered(WatchEventEncodings.JSON) >= delivered + 500);
            await().atMost(Duration.ofSeconds(60)).until(() -> node.core.stats().bookmarksSent() >= bookmarks + 15);
            assertThat(node.core.status().watcherCount()).isEqualTo(3);
            assertThat(metric(node, "watchfanout_watchers", "encoding", "json")).isEqualTo(3.0);
            assertThat(node.core.stats().closed(CloseReason.UNACKNOWLEDGED)).isZero();

            // The namespace goes: first its link (so nothing the clients' sockets send on exit
            // reaches the node), then its processes, then the namespace itself.
            sh("ip", "link", "del", HOST_IF);
            for (Process p : clients) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            clients.clear();
            sh("ip", "netns", "del", NS);

            await().atMost(Duration.ofSeconds(90))
                    .untilAsserted(() -> assertThat(node.core.status().watcherCount())
                            .as(
                                    "watchers left; closed by keepalive %d, by write timeout %d, unacknowledged %d",
                                    node.core.stats().closed(CloseReason.CONNECTION_ERROR),
                                    node.core.stats().closed(CloseReason.WRITE_TIMEOUT),
                                    node.core.stats().closed(CloseReason.UNACKNOWLEDGED))
                            .isZero());
        } finally {
            feeder.interrupt();
            feeder.join(10_000);
        }
        assertThat(node.core.stats().closed(CloseReason.CONNECTION_ERROR))
                .as("the quiet watch: keepalive probes went unanswered")
                .isEqualTo(1);
        assertThat(node.core.stats().closed(CloseReason.WRITE_TIMEOUT))
                .as("the busy watch: its socket took no more bytes")
                .isEqualTo(1);
        assertThat(node.core.stats().closed(CloseReason.UNACKNOWLEDGED))
                .as("the quiet watch with bookmarks: the kernel retried its bookmarks unanswered")
                .isEqualTo(1);
        assertThat(node.core.stats().closed(CloseReason.CLIENT_CLOSED))
                .as("no FIN reached the node")
                .isZero();
        assertThat(metric(node, "watchfanout_watchers_closed_total", "reason", "connection_error"))
                .isEqualTo(1.0);
        assertThat(metric(node, "watchfanout_watchers_closed_total", "reason", "write_timeout"))
                .isEqualTo(1.0);
        assertThat(metric(node, "watchfanout_watchers_closed_total", "reason", "unacknowledged"))
                .isEqualTo(1.0);
        assertThat(node.api.sweeper().registered()).isZero();
        assertThat(metric(node, "watchfanout_watchers", "encoding", "json")).isZero();
        assertThat(node.core.status().queuedFrames()).isZero();
    }

    private static double metric(TestNode node, String name, String label, String value) {
        Double v = node.registry.getSampleValue(name, new String[] {label}, new String[] {value});
        return v == null ? Double.NaN : v;
    }

    /**
     * A watch client in the namespace: bash's {@code /dev/tcp} sends the request and {@code cat}
     * reads the stream as fast as it comes, to /dev/null.
     */
    private void watchFromNamespace(int port, String target) throws IOException {
        String script = "exec 3<>/dev/tcp/$1/$2 && printf 'GET %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' \"$3\" >&3 "
                + "&& exec cat <&3 >/dev/null";
        ProcessBuilder pb = new ProcessBuilder(
                "ip",
                "netns",
                "exec",
                NS,
                "bash",
                "-c",
                script,
                "watch-client",
                NODE_ADDRESS,
                String.valueOf(port),
                target);
        pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        clients.add(pb.start());
    }

    private static void sh(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
    }

    private static boolean tryRun(String... command) {
        try {
            sh(command);
            return true;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return out;
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
