package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.KV;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.WatchClient;
import io.watchfanout.testkit.WatchClient.Encoding;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The events topic as the history, end to end with real etcd, the real ingester and real Kafka:
 * a node restarted after 5,000 more writes resumes watchers from anywhere in the topic with
 * exactly etcd's events; 100 watchers from one old revision share one read; sinceTime lands on
 * the right revision; retention and a rolling restart of the tier under load behave as the README
 * says (no 410 and no relist inside retention, 410 before it).
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class HistoryFromKafkaTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    HistoryFromKafkaTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    /** {@code n} writes (puts over 40 keys, every 9th a delete), 16 in flight; the revision of each. */
    private static long[] write(KV kv, String prefix, int n) throws Exception {
        long[] revs = new long[n];
        List<CompletableFuture<Void>> inFlight = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int at = i;
            String key = prefix + "k" + (i % 40);
            CompletableFuture<Void> f = i % 9 == 8
                    ? kv.delete(EtcdApiStack.bs(key))
                            .thenAccept(r -> revs[at] = r.getHeader().getRevision())
                    : kv.put(EtcdApiStack.bs(key), EtcdApiStack.bs("v" + i))
                            .thenAccept(r -> revs[at] = r.getHeader().getRevision());
            inFlight.add(f);
            if (inFlight.size() == 16) {
                CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]))
                        .get(30, TimeUnit.SECONDS);
                inFlight.clear();
            }
        }
        CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        java.util.Arrays.sort(revs);
        return revs;
    }

    private static ByteString prefixEnd(String p) {
        byte[] b = p.getBytes(StandardCharsets.UTF_8);
        b[b.length - 1]++;
        return ByteString.copyFrom(b);
    }

    private void assertSameAsEtcd(EtcdApiStack stack, WatchClient c, long from, long to) throws Exception {
        await().atMost(WAIT).until(() -> c.lastResourceVersion() >= to || c.ended());
        List<Expected.Frame> expected = Expected.directWatch(
                stack.etcdClient, ByteString.copyFromUtf8(stack.keys), prefixEnd(stack.keys), from, to);
        assertThat(c.frames()).as(c.name()).noneMatch(f -> f.getType() == WatchEvent.Type.ERROR);
        assertThat(Expected.received(c.frames()).stream()
                        .filter(f -> f.revision() <= to)
                        .toList())
                .as(c.name())
                .containsExactlyElementsOf(expected);
    }

    private static double metric(Stack.Node node, String name) throws InterruptedException {
        return Stack.metrics(node).getOrDefault(name, -1.0);
    }

    @Test
    void aRestartedNodeResumesWatchersFromAnywhereInTheTopic(TestInfo info) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            KV kv = stack.kv();
            long first = write(kv, stack.keys, 1)[0];
            Stack.Node a = stack.node("deep-a", "--history-max-events", "200");
            long[] revs = write(kv, stack.keys, 5000);
            long mid = revs[2500];
            long beforeRestart = revs[4990];
            a.process().kill();
            write(kv, stack.keys, 100);
            Stack.Node b = stack.node("deep-b", "--history-max-events", "200");
            // Before its window (which holds at most 200 events before its checkpoint and what came after).
            assertThat(metric(b, "watchfanout_history_start_revision")).isGreaterThan((double) mid);

            long[] froms = {first - 1, first, mid, beforeRestart};
            List<WatchClient> clients = new ArrayList<>();
            for (int i = 0; i < froms.length; i++) {
                WatchClient c = new WatchClient("from-" + froms[i], stack.keys, "prefix", Encoding.values()[i % 3]);
                assertThat(c.connect(b.url(), froms[i])).as("from " + froms[i]).isEqualTo(200);
                clients.add(c);
            }
            long last = write(kv, stack.keys, 100)[99];
            try {
                for (int i = 0; i < froms.length; i++) {
                    assertSameAsEtcd(stack, clients.get(i), froms[i], last);
                }
            } finally {
                clients.forEach(WatchClient::close);
            }
            // The etcd API's start_revision from before the window: the same events as etcd's own watch.
            List<List<String>> lines = RawWatchStream.onEtcdAndNode(
                    stack.etcdChannel(), stack.channel(b), stack.keys, mid + 1, last, WAIT);
            assertThat(lines.get(1)).isEqualTo(lines.get(0)).hasSizeGreaterThan(2000);
            assertThat(metric(b, "watchfanout_resumes_from_kafka_total")).isGreaterThanOrEqualTo(4.0);
            assertThat(metric(b, "watchfanout_catchup_events_total{source=\"kafka\",}"))
                    .isPositive();
            assertThat(metric(b, "watchfanout_older_history_reads_started_total"))
                    .isBetween(1.0, 4.0);

            // 100 watchers from one old revision at once: one read of the span, one encode per event. (The
            // reads above linger for late joiners first; this span is to be read anew.)
            await().atMost(WAIT).until(() -> metric(b, "watchfanout_older_history_reads") == 0);
            double readsBefore = metric(b, "watchfanout_older_history_reads_started_total");
            double eventsReadBefore = metric(b, "watchfanout_older_history_events_read_total");
            String json = "watchfanout_frames_encoded_total{encoding=\"json\",kind=\"event\",}";
            double encodesBefore = metric(b, json);
            long old = revs[1000];
            List<WatchClient> hundred = new ArrayList<>();
            try {
                for (int i = 0; i < 100; i++) {
                    WatchClient c = new WatchClient("same-" + i, stack.keys, "prefix", true);
                    assertThat(c.connect(b.url(), old)).isEqualTo(200);
                    hundred.add(c);
                }
                await().atMost(WAIT).until(() -> hundred.stream().allMatch(c -> c.lastResourceVersion() >= last));
                List<Expected.Frame> expected = Expected.directWatch(
                        stack.etcdClient, ByteString.copyFromUtf8(stack.keys), prefixEnd(stack.keys), old, last);
                for (WatchClient c : hundred) {
                    assertThat(Expected.received(c.frames())).as(c.name()).containsExactlyElementsOf(expected);
                }
            } finally {
                hundred.forEach(WatchClient::close);
            }
            assertThat(metric(b, "watchfanout_older_history_reads_started_total") - readsBefore)
                    .isEqualTo(1.0);
            double eventsRead = metric(b, "watchfanout_older_history_events_read_total") - eventsReadBefore;
            assertThat(eventsRead).isGreaterThan(3000);
            // JSON frames built: those of the events read from Kafka, and none per watcher.
            assertThat(metric(b, json) - encodesBefore).isLessThanOrEqualTo(eventsRead);
        }
    }

    @Test
    void sinceTimeStartsAtTheFirstRevisionRecordedAtOrAfterItAndRetentionMovesThe410(TestInfo info) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            KV kv = stack.kv();
            long early = write(kv, stack.keys, 20)[0];
            Stack.Node node = stack.node("since", "--history-max-events", "5");
            long before = write(kv, stack.keys, 30)[29];
            Thread.sleep(1500);
            Instant at = Instant.now();
            Thread.sleep(1500);
            long[] after = write(kv, stack.keys, 30);
            String url = node.url() + "/v1/watch?key=" + URLEncoder.encode(stack.keys, StandardCharsets.UTF_8)
                    + "&prefix=true&timeoutSeconds=5&sinceTime="
                    + URLEncoder.encode(at.toString(), StandardCharsets.UTF_8);
            List<WatchEvent> frames = Stack.get(url)
                    .body()
                    .lines()
                    .map(io.watchfanout.fanout.testing.Frames::parseJsonLine)
                    .toList();
            assertThat(frames.get(0).getType()).isEqualTo(WatchEvent.Type.BOOKMARK);
            assertThat(frames.get(0).getResourceVersion()).isBetween(before, after[0] - 1);
            List<Long> events = frames.stream()
                    .filter(f -> f.getType() != WatchEvent.Type.BOOKMARK)
                    .map(WatchEvent::getResourceVersion)
                    .distinct()
                    .toList();
            // (A delete of a key already gone answers etcd's revision without making one.)
            assertThat(events)
                    .containsExactlyElementsOf(
                            java.util.Arrays.stream(after).distinct().boxed().toList());

            assertThat(Stack.get(url.replace(
                                    URLEncoder.encode(at.toString(), StandardCharsets.UTF_8), "2001-01-01T00:00:00Z"))
                            .statusCode())
                    .isEqualTo(410);
            assertThat(Stack.get(url + "&resourceVersion=5").statusCode()).isEqualTo(400);
            assertThat(Stack.get(url.replace(URLEncoder.encode(at.toString(), StandardCharsets.UTF_8), "yesterday"))
                            .statusCode())
                    .isEqualTo(400);

            // Retention: a revision before the topic's oldest retained record is 410 (same stack, saving a start).
            assertThat(Stack.get(node.url() + "/v1/watch?key=" + URLEncoder.encode(stack.keys, StandardCharsets.UTF_8)
                                    + "&prefix=true&timeoutSeconds=1&resourceVersion=" + early)
                            .statusCode())
                    .isEqualTo(200);
            String eventsTopic = WatchFanoutSerdes.eventsTopic(stack.topicPrefix);
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, eventsTopic);
                admin.incrementalAlterConfigs(Map.of(
                                topic,
                                List.of(
                                        new AlterConfigOp(
                                                new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET),
                                        new AlterConfigOp(
                                                new ConfigEntry("segment.ms", "1000"), AlterConfigOp.OpType.SET))))
                        .all()
                        .get();
            }
            // New segments roll as writes go on; the old ones go after a second.
            await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).until(() -> {
                write(kv, stack.keys, 5);
                return metric(node, "watchfanout_older_history_floor_revision") > early;
            });
            long floor = (long) metric(node, "watchfanout_older_history_floor_revision");
            String watch = node.url() + "/v1/watch?key=" + URLEncoder.encode(stack.keys, StandardCharsets.UTF_8)
                    + "&prefix=true&timeoutSeconds=3&resourceVersion=";
            assertThat(Stack.get(watch + early).statusCode()).isEqualTo(410);
            assertThat(Stack.get(watch + early).body()).contains("Expired");
            if (floor < metric(node, "watchfanout_history_start_revision")) {
                // Served from what the topic still holds (or already 410 if retention moved on meanwhile).
                int status = Stack.get(watch + floor).statusCode();
                assertThat(status).isIn(200, 410);
            }
        }
    }

    @Test
    void aRollingRestartOfTheTierUnderLoadCausesNo410AndNoRelist(TestInfo info) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka);
                BackgroundWriter writer = new BackgroundWriter(stack.etcdClient, stack.keys, 40)) {
            List<Stack.Node> nodes = new ArrayList<>(List.of(
                    stack.node("roll-a", "--history-max-events", "20"),
                    stack.node("roll-b", "--history-max-events", "20")));
            long start = EtcdWorkload.currentRevision(stack.etcdClient);
            List<WatchClient> clients = new ArrayList<>();
            List<Integer> servedBy = new ArrayList<>();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(32);
            try {
                for (int i = 0; i < 200; i++) {
                    WatchClient c = new WatchClient("w" + i, stack.keys, "prefix", Encoding.values()[i % 3]);
                    assertThat(c.connect(nodes.get(i % 2).url(), start)).isEqualTo(200);
                    clients.add(c);
                    servedBy.add(i % 2);
                }
                int resumes = 0;
                double fromKafka = 0;
                for (int n = 0; n < 2; n++) {
                    long ops = writer.operations();
                    await().atMost(WAIT).until(() -> writer.operations() > ops + 150);
                    // SIGTERM: each stream gets a final bookmark and ends; its watcher resumes on the other node.
                    nodes.get(n).process().stop();
                    // Its replacement starts meanwhile, as in a rolling update.
                    String name = "roll-" + (char) ('a' + n) + "2";
                    CompletableFuture<Stack.Node> replacement = CompletableFuture.supplyAsync(() -> {
                        try {
                            return stack.node(name, "--history-max-events", "20");
                        } catch (Exception e) {
                            throw new java.util.concurrent.CompletionException(e);
                        }
                    });
                    // Each watcher on its own, as independent clients do: all at once.
                    int to = 1 - n;
                    Stack.Node target = nodes.get(to);
                    List<CompletableFuture<Integer>> resumed = new ArrayList<>();
                    for (int i = 0; i < clients.size(); i++) {
                        if (servedBy.get(i) != n) {
                            continue;
                        }
                        WatchClient c = clients.get(i);
                        resumed.add(CompletableFuture.supplyAsync(
                                () -> {
                                    try {
                                        await().atMost(WAIT).until(c::ended);
                                        c.awaitReader();
                                        return resume(c, target, start);
                                    } catch (Exception e) {
                                        throw new java.util.concurrent.CompletionException(e);
                                    }
                                },
                                pool));
                        servedBy.set(i, to);
                    }
                    for (CompletableFuture<Integer> f : resumed) {
                        assertThat(f.get(2, TimeUnit.MINUTES)).isEqualTo(200);
                        resumes++;
                    }
                    fromKafka += metric(nodes.get(1 - n), "watchfanout_resumes_from_kafka_total");
                    nodes.set(n, replacement.get(2, TimeUnit.MINUTES));
                }
                // The first restart moves 100 watchers, the second the 200 then on the other node.
                assertThat(resumes).isEqualTo(300);
                // With a window of 20 events, the resumes came from the events topic.
                assertThat(fromKafka).isPositive();
                long ops = writer.operations();
                await().atMost(WAIT).until(() -> writer.operations() > ops + 100);
                writer.stop();
                long end = EtcdWorkload.currentRevision(stack.etcdClient);
                List<Expected.Frame> expected = Expected.directWatch(
                        stack.etcdClient, ByteString.copyFromUtf8(stack.keys), prefixEnd(stack.keys), start, end);
                await().atMost(WAIT).until(() -> clients.stream().allMatch(c -> c.lastResourceVersion() >= end));
                for (WatchClient c : clients) {
                    assertThat(c.frames()).as(c.name()).noneMatch(f -> f.getType() == WatchEvent.Type.ERROR);
                    assertThat(Expected.received(c.frames()).stream()
                                    .filter(f -> f.revision() <= end)
                                    .toList())
                            .as(c.name())
                            .containsExactlyElementsOf(expected);
                }
            } finally {
                pool.shutdownNow();
                clients.forEach(WatchClient::close);
            }
        }
    }

    /** The README's resume rule: from the last complete revision or bookmark; 429 or no connection: try again shortly. */
    private static int resume(WatchClient c, Stack.Node to, long start) throws Exception {
        long from = c.trimToResumePoint(start);
        int status = 0;
        for (int attempt = 0; attempt < 30; attempt++) {
            try {
                status = c.encoding() == Encoding.SSE
                        ? c.reconnectAsEventSource(to.url(), start)
                        : c.connect(to.url(), from);
            } catch (java.io.IOException e) {
                // A node busy taking over a hundred streams on a loaded box may not accept within the client's
                // connect timeout: a client retries, as from any failed connection.
                status = -1;
            }
            if (status != 429 && status != -1) {
                return status;
            }
            Thread.sleep(1000);
        }
        return status;
    }
}
