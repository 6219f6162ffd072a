package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.watchfanout.fanout.testing.NodeApps;
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
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Node's {@code etcd3} package (1.1.2, a gRPC client of its own) against a node's etcd API: its
 * watcher (prefix, start revision, previous key-values) gets exactly etcd's events, and its reads
 * through the node equal etcd's. Installs the package with {@code npm ci} from the lock file in
 * {@code src/test/node/etcd3-client}.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class EtcdApiNodeClientTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    EtcdApiNodeClientTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void theNpmEtcd3ClientWatchesAndReadsThroughANode(TestInfo info) throws Exception {
        Path app = installClient();
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            String p = stack.keys;
            String prefix = stack.topicPrefix;
            Client client = stack.etcdClient;
            Stack.Node node = stack.node("etcd3-npm-1");
            int apiPort = stack.apiPort(node);
            KV kv = stack.kv();
            long start = kv.put(bs(p + "a"), bs("1")).get().getHeader().getRevision();
            Path out = app.resolve("out-" + prefix + ".txt");
            Process watch = new ProcessBuilder("node", "watch.js", "127.0.0.1:" + apiPort, p, Long.toString(start))
                    .directory(app.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            try (OutputStream stdin = watch.getOutputStream()) {
                await().atMost(WAIT).until(() -> Files.readString(out).contains("\"READY\""));
                kv.put(bs(p + "b"), bs("2")).get();
                kv.put(bs(p + "a"), bs("3")).get();
                kv.txn()
                        .Then(
                                Op.put(bs(p + "c"), bs("t"), PutOption.DEFAULT),
                                Op.delete(bs(p + "b"), DeleteOption.DEFAULT))
                        .commit()
                        .get();
                long last = kv.delete(bs(p + "a")).get().getHeader().getRevision();
                List<String> expected = expected(client, p, start, last);
                await().atMost(WAIT).untilAsserted(() -> assertThat(events(out)).isEqualTo(expected));
                stdin.write("get\n".getBytes(StandardCharsets.UTF_8));
                stdin.flush();
                await().atMost(WAIT).until(() -> Files.readString(out).contains("\"GET\""));
                String got = Files.readString(out)
                        .lines()
                        .filter(l -> l.contains("\"GET\""))
                        .findFirst()
                        .orElseThrow();
                assertThat(got).isEqualTo("{\"type\":\"GET\",\"kvs\":{\"" + p + "c\":\"t\"}}");
            } finally {
                watch.destroy();
                watch.waitFor(10, TimeUnit.SECONDS);
            }
            assertThat(Stack.metrics(node).get("watchfanout_etcd_api_ranges_from_cache_total"))
                    .isGreaterThanOrEqualTo(1.0);
            assertThat(stack.ingester.isAlive()).isTrue();
        }
    }

    /** etcd's own events of the prefix from {@code start} to {@code last}, from a jetcd watch, as the script prints them. */
    private static List<String> expected(Client client, String p, long start, long last) throws Exception {
        List<String> out = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicLong seen = new java.util.concurrent.atomic.AtomicLong();
        io.etcd.jetcd.Watch.Watcher w = client.getWatchClient()
                .watch(
                        bs(p),
                        io.etcd.jetcd.options.WatchOption.builder()
                                .isPrefix(true)
                                .withRevision(start)
                                .withPrevKV(true)
                                .build(),
                        r -> {
                            for (io.etcd.jetcd.watch.WatchEvent e : r.getEvents()) {
                                io.etcd.jetcd.KeyValue x = e.getKeyValue();
                                io.etcd.jetcd.KeyValue prev = e.getPrevKV();
                                String prevValue = prev == null || prev.getModRevision() == 0
                                        ? "null"
                                        : "\"" + prev.getValue().toString(StandardCharsets.UTF_8) + "\"";
                                String key = x.getKey().toString(StandardCharsets.UTF_8);
                                out.add(
                                        e.getEventType() == io.etcd.jetcd.watch.WatchEvent.EventType.PUT
                                                ? "{\"type\":\"PUT\",\"key\":\"" + key + "\",\"value\":\""
                                                        + x.getValue().toString(StandardCharsets.UTF_8)
                                                        + "\",\"mod\":\"" + x.getModRevision() + "\",\"prev\":"
                                                        + prevValue + "}"
                                                : "{\"type\":\"DELETE\",\"key\":\"" + key + "\",\"mod\":\""
                                                        + x.getModRevision() + "\",\"prev\":" + prevValue + "}");
                                seen.set(x.getModRevision());
                            }
                        });
        try {
            await().atMost(WAIT).until(() -> seen.get() >= last);
        } finally {
            w.close();
        }
        return List.copyOf(out);
    }

    private static List<String> events(Path out) throws IOException {
        try (Stream<String> lines = Files.lines(out)) {
            return lines.filter(l -> l.startsWith("{\"type\":\"PUT\"") || l.startsWith("{\"type\":\"DELETE\""))
                    .toList();
        }
    }

    /** {@code npm ci} of the pinned etcd3 package into target/, once per build. */
    private static Path installClient() throws Exception {
        return NodeApps.install("etcd3-client", "etcd3", List.of("package.json", "package-lock.json", "watch.js"));
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
