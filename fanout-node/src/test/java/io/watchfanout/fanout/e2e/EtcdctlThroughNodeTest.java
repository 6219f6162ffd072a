package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcdctl (Debian's, Go's clientv3 3.4) against a node's etcd API as against etcd: watches
 * (prefix, start revision, prev kv, interactive with several watches), reads with and without
 * {@code --consistency=s}, writes, transactions and leases through the node, and
 * {@code make-mirror} from a node into a second etcd.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class EtcdctlThroughNodeTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    EtcdctlThroughNodeTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void etcdctlWatchesReadsWritesAndMirrorsThroughANode(TestInfo info, @TempDir Path dir) throws Exception {
        String atEtcd = "127.0.0.1:" + etcd.clientPort();
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            String p = stack.keys;
            Stack.Node node = stack.node("etcdctl-1");
            String atNode = stack.endpoint(node);
            // Writes through the node are forwarded to etcd.
            assertThat(etcdctl(atNode, "put", p + "a", "1")).isEqualTo("OK");
            assertThat(etcdctl(atEtcd, "get", p + "a", "--print-value-only")).isEqualTo("1");
            String rev = etcdctl(atEtcd, "get", p + "a", "-w", "fields")
                    .lines()
                    .filter(l -> l.startsWith("\"Revision\""))
                    .findFirst()
                    .orElseThrow()
                    .replaceAll("\\D", "");

            List<Process> watches = new ArrayList<>();
            Process prefixOnNode =
                    start(dir.resolve("node-watch.txt"), atNode, "watch", "--prefix", p, "--rev", rev, "--prev-kv");
            Process prefixOnEtcd =
                    start(dir.resolve("etcd-watch.txt"), atEtcd, "watch", "--prefix", p, "--rev", rev, "--prev-kv");
            Process interactive = start(dir.resolve("node-interactive.txt"), atNode, "watch", "-i");
            watches.add(prefixOnNode);
            watches.add(prefixOnEtcd);
            watches.add(interactive);
            try (OutputStream in = interactive.getOutputStream()) {
                in.write(("watch " + p + "b\nwatch --prefix " + p + "c\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
                Thread.sleep(1000);
                assertThat(etcdctl(atNode, "put", p + "b", "2")).isEqualTo("OK");
                assertThat(etcdctl(atNode, "put", p + "c/1", "3")).isEqualTo("OK");
                assertThat(etcdctl(atNode, "put", p + "a", "4")).isEqualTo("OK");
                // no comparisons, three operations on success, none on failure
                String txn = "\nput " + p + "c/2 t\nput " + p + "b t\ndel " + p + "a\n\n\n";
                assertThat(etcdctlWithInput(atNode, txn, "txn")).contains("SUCCESS");
                String lease = etcdctl(atNode, "lease", "grant", "60").split(" ")[1];
                assertThat(etcdctl(atNode, "put", p + "leased", "x", "--lease=" + lease))
                        .isEqualTo("OK");
                assertThat(etcdctl(atNode, "lease", "keep-alive", "--once", lease))
                        .contains("keepalived");
                assertThat(etcdctl(atNode, "lease", "revoke", lease)).contains("revoked");
                assertThat(etcdctl(atNode, "del", p + "b")).isEqualTo("1");

                // Reads from the cache: serializable at the node's revision, the default linearizable.
                assertThat(etcdctl(atNode, "get", "--prefix", p, "--keys-only"))
                        .isEqualTo(etcdctl(atEtcd, "get", "--prefix", p, "--keys-only"));
                await().atMost(WAIT)
                        .untilAsserted(() -> assertThat(etcdctl(atNode, "get", "--prefix", p, "--consistency=s"))
                                .isEqualTo(etcdctl(atEtcd, "get", "--prefix", p)));
                assertThat(etcdctl(atNode, "get", "--prefix", p, "-w", "json")
                                .replaceAll("\"member_id\":\\d+,", "")
                                .replaceAll("\"raft_term\":\\d+", ""))
                        .isEqualTo(etcdctl(atEtcd, "get", "--prefix", p, "-w", "json")
                                .replaceAll("\"member_id\":\\d+,", "")
                                .replaceAll("\"raft_term\":\\d+", ""));

                String etcdLines = await().atMost(WAIT)
                        .until(
                                () -> Files.readString(dir.resolve("etcd-watch.txt")),
                                s -> s.contains(p + "leased")
                                        && s.lines()
                                                        .filter(l -> l.equals("DELETE"))
                                                        .count()
                                                >= 3);
                await().atMost(WAIT)
                        .until(() ->
                                Files.readString(dir.resolve("node-watch.txt")).equals(etcdLines));
                String interactiveLines = await().atMost(WAIT)
                        .until(
                                () -> Files.readString(dir.resolve("node-interactive.txt")),
                                s -> s.lines().filter(l -> l.equals("DELETE")).count() >= 1);
                assertThat(interactiveLines
                                .lines()
                                .filter(l -> l.equals(p + "b"))
                                .count())
                        .isEqualTo(3);
                assertThat(interactiveLines).contains(p + "c/1", p + "c/2").doesNotContain(p + "a\n");

                // make-mirror: a second etcd gets an exact copy of the prefix through the node's watch.
                EtcdServer second = new EtcdServer().start();
                Process mirror = null;
                try {
                    mirror = start(
                            dir.resolve("mirror.txt"),
                            atNode,
                            "make-mirror",
                            "--prefix",
                            p,
                            "127.0.0.1:" + second.clientPort());
                    assertThat(etcdctl(atNode, "put", p + "after-mirror", "m")).isEqualTo("OK");
                    String atSecond = "127.0.0.1:" + second.clientPort();
                    await().atMost(WAIT)
                            .untilAsserted(() -> assertThat(etcdctl(atSecond, "get", "--prefix", p))
                                    .isEqualTo(etcdctl(atEtcd, "get", "--prefix", p)));
                    assertThat(etcdctl(atSecond, "get", "--prefix", p)).contains(p + "after-mirror");
                } finally {
                    if (mirror != null) {
                        mirror.destroy();
                    }
                    second.close();
                }
            } finally {
                for (Process w : watches) {
                    w.destroy();
                    w.waitFor(5, TimeUnit.SECONDS);
                }
            }
            Map<String, Double> m = Stack.metrics(node);
            assertThat(m.get("watchfanout_etcd_api_ranges_from_cache_total")).isGreaterThanOrEqualTo(4.0);
            assertThat(m.get("watchfanout_etcd_api_forwarded_total")).isGreaterThanOrEqualTo(8.0);
            assertThat(stack.ingester.isAlive()).isTrue();
        }
    }

    private static Process start(Path out, String endpoint, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("etcdctl", "--endpoints=" + endpoint));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("ETCDCTL_API", "3");
        return pb.start();
    }

    private static String etcdctl(String endpoint, String... args) throws Exception {
        return etcdctlWithInput(endpoint, null, args);
    }

    /** Runs etcdctl with {@code stdin}, when not null, as its input (a txn script). */
    private static String etcdctlWithInput(String endpoint, String stdin, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("etcdctl", "--endpoints=" + endpoint));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("ETCDCTL_API", "3");
        Process proc = pb.start();
        try (OutputStream in = proc.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(proc.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as("etcdctl %s: %s", cmd, out).isZero();
        return out;
    }
}
