package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.WatchClient;
import io.watchfanout.testkit.WatchClient.Encoding;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Invariants 4–6 (docs/ARCHITECTURE.md) end to end: real etcd, real Kafka, the real ingester jar and fan-out nodes
 * as child processes, watched over plain HTTP in all three encodings (JSON lines, protobuf,
 * Server-Sent Events) and compared with direct etcd watches.
 */
class FanoutEndToEndTest extends StackTest {
    FanoutEndToEndTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    private Stack.Node node(String name) throws Exception {
        return closer.keep(Stack.node(name, kafka.bootstrapServers(), topicPrefix));
    }

    private JavaProcess ingester() {
        return closer.keep(Stack.ingester(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix));
    }

    /** The ranges of the 50 watchers: overlapping prefixes, exact keys and ranges. */
    private List<String[]> ranges() {
        List<String[]> out = new ArrayList<>();
        out.add(new String[] {keyPrefix, "prefix"});
        out.add(new String[] {keyPrefix + "lease-", "prefix"});
        for (int i = 0; i < 10; i++) {
            out.add(new String[] {keyPrefix + "k" + i, "prefix"});
            out.add(new String[] {keyPrefix + "k" + (i * 7 % 60), "key"});
            out.add(new String[] {keyPrefix + "k" + i, keyPrefix + "k" + i + "5"});
        }
        while (out.size() < 50) {
            int i = out.size();
            out.add(new String[] {keyPrefix + "k" + (i % 5), keyPrefix + "k" + (i % 5) + "5"});
        }
        return out;
    }

    private static ByteString rangeEnd(String[] range) {
        switch (range[1]) {
            case "key":
                return ByteString.EMPTY;
            case "prefix": {
                byte[] b = range[0].getBytes(java.nio.charset.StandardCharsets.UTF_8);
                b[b.length - 1]++;
                return ByteString.copyFrom(b);
            }
            default:
                return ByteString.copyFromUtf8(range[1]);
        }
    }

    private static void awaitRevision(List<WatchClient> clients, long revision) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> clients.stream().allMatch(c -> c.lastResourceVersion() >= revision));
    }

    /** Checks every client against its own direct etcd watch; the watches run side by side. */
    private void assertSameAsEtcd(List<WatchClient> clients, List<String[]> ranges, long from, long to)
            throws Exception {
        List<java.util.concurrent.CompletableFuture<List<Expected.Frame>>> expected = new ArrayList<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(ranges.size());
        for (String[] range : ranges) {
            expected.add(java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return Expected.directWatch(
                                    etcd, ByteString.copyFromUtf8(range[0]), rangeEnd(range), from, to);
                        } catch (Exception e) {
                            throw new java.util.concurrent.CompletionException(e);
                        }
                    },
                    pool));
        }
        try {
            for (int i = 0; i < clients.size(); i++) {
                assertSameAsEtcd(clients.get(i), expected.get(i).get(90, TimeUnit.SECONDS), to);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private void assertSameAsEtcd(WatchClient client, List<Expected.Frame> expected, long to) {
        assertThat(client.failure()).as(client.name()).isNull();
        List<Expected.Frame> received = Expected.received(client.frames()).stream()
                .filter(f -> f.revision() <= to)
                .toList();
        assertThat(received).as(client.name()).containsExactlyElementsOf(expected);
        assertRevisionsWhole(client);
    }

    /**
     * The frames of one revision are adjacent, in index order, with no bookmark among them; a
     * bookmark never names a revision whose frames are still to come.
     */
    private static void assertRevisionsWhole(WatchClient client) {
        List<WatchEvent> frames = client.frames();
        Set<Long> closed = new HashSet<>();
        long open = -1;
        int lastIndex = -1;
        for (WatchEvent f : frames) {
            if (f.getType() == WatchEvent.Type.BOOKMARK) {
                assertThat(f.getResourceVersion())
                        .as(client.name() + ": bookmark behind an event")
                        .isGreaterThanOrEqualTo(open);
                closed.add(open);
                open = -1;
                continue;
            }
            if (f.getResourceVersion() != open) {
                assertThat(closed).as(client.name() + ": revision split").doesNotContain(f.getResourceVersion());
                closed.add(open);
                open = f.getResourceVersion();
                lastIndex = -1;
            }
            assertThat(f.getIndex()).as(client.name() + ": index order").isGreaterThan(lastIndex);
            lastIndex = f.getIndex();
        }
    }

    @Test
    void fiftyWatchersOnTwoNodesSeeWhatEtcdSeesEncodedOncePerEncoding() throws Exception {
        ingester();
        Stack.Node a = node("node-a");
        Stack.Node b = node("node-b");
        long start = EtcdWorkload.currentRevision(etcd);
        await().atMost(Duration.ofSeconds(30)).until(() -> Stack.metrics(a).get("watchfanout_cache_revision") >= 0);

        List<String[]> ranges = ranges();
        List<WatchClient> clients = new ArrayList<>();
        for (int i = 0; i < ranges.size(); i++) {
            WatchClient c =
                    closer.keep(new WatchClient("w" + i, ranges.get(i)[0], ranges.get(i)[1], Encoding.values()[i % 3]));
            assertThat(c.connect((i % 4 < 2 ? a : b).url(), start)).isEqualTo(200);
            clients.add(c);
        }
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 99, 60);
        long lease = workload.leaseWithKeys(3, 2);
        long last = workload.run(1000);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> etcd.getKVClient()
                        .get(EtcdWorkload.bytes(keyPrefix + "lease-" + lease + "-0"))
                        .get(5, TimeUnit.SECONDS)
                        .getKvs()
                        .isEmpty());
        long end = Math.max(last, EtcdWorkload.currentRevision(etcd));
        awaitRevision(clients, end);

        assertSameAsEtcd(clients, ranges, start, end);
        // The lease expiry reached the lease watcher as one revision of three DELETED frames.
        List<WatchEvent> leaseFrames = clients.get(1).frames().stream()
                .filter(f -> f.getType() == WatchEvent.Type.DELETED)
                .toList();
        assertThat(leaseFrames)
                .hasSize(3)
                .allSatisfy(f -> assertThat(f.getCount()).isEqualTo(3));

        // Serialize once: per node and encoding, encodes equal the distinct events its watchers
        // of that encoding received; deliveries are at least the sum over those watchers. The
        // frames are taken before the scrape: periodic bookmarks keep arriving, and a frame is
        // counted before it is written.
        List<List<WatchEvent>> received =
                clients.stream().map(WatchClient::frames).toList();
        for (Stack.Node node : List.of(a, b)) {
            Map<String, Double> metrics = Stack.metrics(node);
            for (Encoding encoding : Encoding.values()) {
                Set<String> distinct = new HashSet<>();
                long delivered = 0;
                for (int i = 0; i < clients.size(); i++) {
                    Stack.Node servedBy = i % 4 < 2 ? a : b;
                    if (servedBy != node || clients.get(i).encoding() != encoding) {
                        continue;
                    }
                    for (WatchEvent f : received.get(i)) {
                        delivered++;
                        if (f.getType() != WatchEvent.Type.BOOKMARK) {
                            distinct.add(f.getObject().getKey().toStringUtf8() + "@" + f.getResourceVersion() + "#"
                                    + f.getIndex());
                        }
                    }
                }
                String enc = encoding.name().toLowerCase(java.util.Locale.ROOT);
                assertThat(metrics.get("watchfanout_frames_encoded_total{encoding=\"" + enc + "\",kind=\"event\",}"))
                        .as(node.url() + " " + enc + " encodes")
                        .isEqualTo((double) distinct.size());
                assertThat(metrics.get("watchfanout_frames_delivered_total{encoding=\"" + enc + "\",}"))
                        .as(node.url() + " " + enc + " deliveries")
                        .isGreaterThanOrEqualTo((double) delivered);
            }
        }
    }

    @Test
    void watchersOfAKilledNodeResumeOnTheOtherFromTheirLastBookmarkOrEvent() throws Exception {
        ingester();
        Stack.Node a = node("node-a");
        Stack.Node b = node("node-b");
        long start = EtcdWorkload.currentRevision(etcd);
        List<String[]> ranges = ranges().subList(0, 12);
        List<WatchClient> clients = new ArrayList<>();
        for (int i = 0; i < ranges.size(); i++) {
            WatchClient c =
                    closer.keep(new WatchClient("w" + i, ranges.get(i)[0], ranges.get(i)[1], Encoding.values()[i % 3]));
            assertThat(c.connect(b.url(), start)).isEqualTo(200);
            clients.add(c);
        }
        try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 2)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> writer.operations() > 300);
            b.process().kill();
            for (WatchClient c : clients) {
                await().atMost(Duration.ofSeconds(10)).until(c::ended);
                c.awaitReader();
                long resumeFrom = c.trimToResumePoint(start);
                // An SSE client reconnects as an EventSource: same URL (resourceVersion=start), and
                // Last-Event-ID, which must win over the URL.
                int status = c.encoding() == Encoding.SSE
                        ? c.reconnectAsEventSource(a.url(), start)
                        : c.connect(a.url(), resumeFrom);
                assertThat(status).as(c.name() + " resumes from " + resumeFrom).isEqualTo(200);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> writer.operations() > 600);
        }
        long end = EtcdWorkload.currentRevision(etcd);
        awaitRevision(clients, end);
        assertSameAsEtcd(clients, ranges, start, end);
    }

    @Test
    void aNodeStartedAfterTheWritesRebuildsFromKafkaAlone() throws Exception {
        ingester();
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 5, 300);
        long last = workload.run(800);
        Stack.Node late = node("node-late");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> Stack.metrics(late).get("watchfanout_cache_revision") >= last);
        List<KeyValue> listed = new ArrayList<>();
        long revision = -1;
        String token = "";
        do {
            String url = late.url() + "/v1/kv?key=" + java.net.URLEncoder.encode(keyPrefix, "UTF-8")
                    + "&prefix=true&limit=70" + (token.isEmpty() ? "" : "&continue=" + token);
            KeyValueList.Builder page = KeyValueList.newBuilder();
            JsonFormat.parser().merge(Stack.get(url).body(), page);
            listed.addAll(page.getKvsList());
            revision = revision < 0 ? page.getResourceVersion() : revision;
            assertThat(page.getResourceVersion()).isEqualTo(revision);
            token = page.getContinue();
        } while (!token.isEmpty());
        Map<ByteString, KeyValue> expected = new HashMap<>();
        for (KeyValue kv : etcdAt(revision)) {
            expected.put(kv.getKey(), kv);
        }
        assertThat(expected).hasSizeGreaterThan(100);
        assertThat(listed)
                .containsExactlyElementsOf(expected.values().stream()
                        .sorted((x, y) ->
                                ByteString.unsignedLexicographicalComparator().compare(x.getKey(), y.getKey()))
                        .toList());
    }

    @Test
    void aQuietPrefixGetsAdvancingBookmarksThatResumeWithout410() throws Exception {
        ingester();
        Stack.Node a = node("node-a");
        Stack.Node b = node("node-b");
        WatchClient quiet = closer.keep(new WatchClient("quiet", keyPrefix + "quiet/", "prefix", true));
        assertThat(quiet.connect(a.url(), 0)).isEqualTo(200);
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix + "busy/", 1, 20);
        long first = workload.run(50);
        await().atMost(Duration.ofSeconds(20)).until(() -> quiet.lastResourceVersion() >= first);
        long second = workload.run(50);
        await().atMost(Duration.ofSeconds(20)).until(() -> quiet.lastResourceVersion() >= second);
        List<WatchEvent> frames = quiet.frames();
        assertThat(frames).allSatisfy(f -> assertThat(f.getType()).isEqualTo(WatchEvent.Type.BOOKMARK));
        assertThat(frames.stream()
                        .mapToLong(WatchEvent::getResourceVersion)
                        .distinct()
                        .count())
                .isGreaterThan(1);
        WatchClient resumed = closer.keep(new WatchClient("resumed", keyPrefix + "quiet/", "prefix", false));
        assertThat(resumed.connect(b.url(), quiet.lastResourceVersion())).isEqualTo(200);
        etcd.getKVClient()
                .put(EtcdWorkload.bytes(keyPrefix + "quiet/x"), EtcdWorkload.bytes("1"))
                .get(5, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> resumed.frames().stream().anyMatch(f -> f.getType() == WatchEvent.Type.ADDED));
    }
}
