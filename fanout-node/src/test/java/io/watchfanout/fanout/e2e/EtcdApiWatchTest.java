package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.WatchCancelRequest;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchProgressRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The differential test of the etcd API: the same Watch requests on one stream to etcd and on one
 * stream to a node, the same writes, the responses compared field by field. The documented
 * difference: a start revision older than the node's history is answered with the node's oldest
 * servable revision as {@code compact_revision} (etcd, not compacted, replays it).
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class EtcdApiWatchTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    EtcdApiWatchTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void watchesOnANodeAnswerAsEtcdDoes(TestInfo info) throws Exception {
        int apiPort = FreePorts.pick();
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            String prefix = stack.topicPrefix;
            String p = stack.keys;
            JavaProcess ingester = stack.ingester;
            Client client = stack.etcdClient;
            KV kv = client.getKVClient();
            for (int i = 0; i < 5; i++) {
                kv.put(bs(p + "old-" + i), bs("v" + i)).get();
            }
            try (Stack.Node node = Stack.etcdApiNode(
                    "etcd-api-1",
                    kafka.bootstrapServers(),
                    prefix,
                    apiPort,
                    etcd.clientUrl(),
                    "--progress-notify-interval",
                    "1s")) {
                ManagedChannel toEtcd = ManagedChannelBuilder.forAddress("127.0.0.1", etcd.clientPort())
                        .usePlaintext()
                        .build();
                ManagedChannel toNode = ManagedChannelBuilder.forAddress("127.0.0.1", apiPort)
                        .usePlaintext()
                        .build();
                long before = kv.get(bs(p)).get().getHeader().getRevision();
                await().atMost(WAIT)
                        .until(() -> KVGrpc.newBlockingStub(toNode)
                                        .range(RangeRequest.newBuilder()
                                                .setKey(ByteString.copyFromUtf8(p))
                                                .setSerializable(true)
                                                .build())
                                        .getHeader()
                                        .getRevision()
                                >= before);
                try (RawWatchStream onEtcd = new RawWatchStream(toEtcd);
                        RawWatchStream onNode = new RawWatchStream(toNode)) {
                    long start = before + 1;
                    List<WatchCreateRequest> creates = List.of(
                            create(p, prefixEnd(p), start).setPrevKv(true).build(),
                            create(p + "k1", "", start)
                                    .addFilters(WatchCreateRequest.FilterType.NOPUT)
                                    .build(),
                            create(p + "b", p + "m", start)
                                    .addFilters(WatchCreateRequest.FilterType.NODELETE)
                                    .setPrevKv(true)
                                    .build(),
                            // a future start revision: waited for
                            create(p, prefixEnd(p), start + 4).build(),
                            // from now
                            create(p, prefixEnd(p), 0).build(),
                            // every key from p on ("\0" range end), with both filters: nothing at all
                            create(p, "\0", start)
                                    .addFilters(WatchCreateRequest.FilterType.NOPUT)
                                    .addFilters(WatchCreateRequest.FilterType.NODELETE)
                                    .build());
                    for (int i = 0; i < creates.size(); i++) {
                        long id = i;
                        WatchRequest req = WatchRequest.newBuilder()
                                .setCreateRequest(creates.get(i))
                                .build();
                        onEtcd.send(req);
                        onNode.send(req);
                        WatchResponse e = onEtcd.await(r -> r.getCreated() && r.getWatchId() == id, WAIT);
                        WatchResponse n = onNode.await(r -> r.getCreated() && r.getWatchId() == id, WAIT);
                        assertThat(n.getCanceled()).isEqualTo(e.getCanceled());
                    }
                    // A start revision before the node's history (which starts where its topics start).
                    // (On an etcd whose history the node holds from revision 1 on, as when this test runs first on
                    // a fresh etcd, no start revision is too old: revision 1 holds no event.)
                    long historyStart = historyStart(node);
                    if (historyStart > 1) {
                        onNode.send(WatchRequest.newBuilder()
                                .setCreateRequest(create(p, prefixEnd(p), historyStart))
                                .build());
                        WatchResponse compacted = onNode.await(r -> r.getCompactRevision() != 0, WAIT);
                        assertThat(compacted.getCanceled()).isTrue();
                        assertThat(compacted.getCompactRevision()).isEqualTo(historyStart + 1);
                    }
                    // The node rebuilt after the old writes, yet serves a watch from the first of them.
                    onNode.send(WatchRequest.newBuilder()
                            .setCreateRequest(create(p, prefixEnd(p), historyStart + 1))
                            .build());
                    onNode.await(
                            r -> r.getEventsList().stream()
                                    .anyMatch(ev ->
                                            ev.getKv().getKey().toStringUtf8().equals(p + "old-0")),
                            WAIT);

                    writes(client, p);
                    long last = kv.get(bs(p)).get().getHeader().getRevision();

                    WatchRequest progress = WatchRequest.newBuilder()
                            .setProgressRequest(WatchProgressRequest.getDefaultInstance())
                            .build();
                    onEtcd.send(progress);
                    WatchResponse pe = onEtcd.await(
                            r -> r.getWatchId() == -1 && r.getHeader().getRevision() >= last, WAIT);
                    // The node answers at the revision it has dispatched, which may still be behind etcd's: ask again
                    // until it reaches etcd's, as kube-apiserver's progress requester does.
                    WatchResponse pn;
                    int asked = 0;
                    do {
                        onNode.send(progress);
                        asked++;
                        int n = asked;
                        pn = onNode.await(
                                r -> r.getWatchId() == -1
                                        && onNode.received.stream()
                                                        .filter(x -> x.getWatchId() == -1)
                                                        .count()
                                                >= n,
                                WAIT);
                    } while (pn.getHeader().getRevision() < last);
                    assertThat(pn.getEventsCount()).isZero();
                    assertThat(pe.getEventsCount()).isZero();

                    WatchRequest cancel = WatchRequest.newBuilder()
                            .setCancelRequest(WatchCancelRequest.newBuilder().setWatchId(1))
                            .build();
                    onEtcd.send(cancel);
                    onNode.send(cancel);
                    onEtcd.await(r -> r.getCanceled() && r.getWatchId() == 1, WAIT);
                    onNode.await(r -> r.getCanceled() && r.getWatchId() == 1, WAIT);
                    onEtcd.drain(Duration.ofMillis(500));
                    onNode.drain(Duration.ofMillis(500));

                    for (long id = 0; id < creates.size(); id++) {
                        List<String> fromEtcd = events(onEtcd.received, id);
                        List<String> fromNode = events(onNode.received, id);
                        assertThat(fromNode).as("watch %d", id).isEqualTo(fromEtcd);
                        checkWholeRevisions(onNode.received, id);
                        checkWholeRevisions(onEtcd.received, id);
                    }
                    assertThat(events(onEtcd.received, 0)).hasSizeGreaterThan(10);
                    assertThat(events(onNode.received, 5)).isEmpty();
                    assertThat(onNode.error()).isNull();
                    // Serialize once: each event is encoded at most once per etcd encoding, whatever the watches.
                    Map<String, Double> m = Stack.metrics(node);
                    long distinct = onNode.received.stream()
                            .flatMap(r -> r.getEventsList().stream())
                            .map(e -> e.getKv().getModRevision() + "/"
                                    + e.getKv().getKey().toStringUtf8())
                            .distinct()
                            .count();
                    assertThat(m.get("watchfanout_frames_encoded_total{encoding=\"etcd\",kind=\"event\",}"))
                            .isLessThanOrEqualTo((double) distinct);
                    assertThat(m.get("watchfanout_frames_encoded_total{encoding=\"etcd_prev_kv\",kind=\"event\",}"))
                            .isLessThanOrEqualTo((double) distinct);
                    assertThat(ingester.isAlive()).isTrue();
                } finally {
                    toEtcd.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                    toNode.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    @Test
    void rangesOnANodeAnswerAsEtcdDoes(TestInfo info) throws Exception {
        int apiPort = FreePorts.pick();
        // The ingester's history begins at its start: a range before it has a revision to name.
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka, s -> {}, "--initial-history-revisions", "0")) {
            String prefix = stack.topicPrefix;
            String p = stack.keys;
            JavaProcess ingester = stack.ingester;
            Client client = stack.etcdClient;
            KV kv = client.getKVClient();
            kv.put(bs(p + "early"), bs("e")).get();
            long early = kv.get(bs(p)).get().getHeader().getRevision();
            try (Stack.Node node =
                    Stack.etcdApiNode("etcd-api-2", kafka.bootstrapServers(), prefix, apiPort, etcd.clientUrl())) {
                kv.put(bs(p + "a"), bs("3")).get();
                kv.put(bs(p + "b"), bs("1")).get();
                long mid = kv.put(bs(p + "a"), bs("2")).get().getHeader().getRevision();
                kv.put(bs(p + "c"), bs("9")).get();
                kv.put(bs(p + "b"), bs("5")).get();
                kv.put(bs(p + "d"), bs("0")).get();
                kv.delete(bs(p + "c")).get();
                kv.put(bs(p + "e/1"), bs("x")).get();
                kv.put(bs(p + "e/2"), bs("y")).get();
                ManagedChannel toEtcd = ManagedChannelBuilder.forAddress("127.0.0.1", etcd.clientPort())
                        .usePlaintext()
                        .build();
                ManagedChannel toNode = ManagedChannelBuilder.forAddress("127.0.0.1", apiPort)
                        .usePlaintext()
                        .build();
                try {
                    KVGrpc.KVBlockingStub e = KVGrpc.newBlockingStub(toEtcd);
                    KVGrpc.KVBlockingStub n = KVGrpc.newBlockingStub(toNode);
                    ByteString key = ByteString.copyFromUtf8(p);
                    ByteString end = ByteString.copyFromUtf8(prefixEnd(p));
                    List<RangeRequest> requests = List.of(
                            RangeRequest.newBuilder()
                                    .setKey(ByteString.copyFromUtf8(p + "a"))
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(ByteString.copyFromUtf8(p + "zzz"))
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setLimit(2)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setCountOnly(true)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setKeysOnly(true)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setSortTarget(RangeRequest.SortTarget.MOD)
                                    .setSortOrder(RangeRequest.SortOrder.DESCEND)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setSortTarget(RangeRequest.SortTarget.CREATE)
                                    .setLimit(3)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setSortTarget(RangeRequest.SortTarget.KEY)
                                    .setSortOrder(RangeRequest.SortOrder.DESCEND)
                                    .setLimit(2)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setMinModRevision(mid)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setMaxCreateRevision(mid)
                                    .setLimit(1)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setRevision(mid)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setRevision(early)
                                    .build(),
                            // before the node's history: forwarded
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setRevision(historyStart(node) - 1)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(ByteString.copyFromUtf8(p + "e/"))
                                    .setRangeEnd(ByteString.copyFrom(new byte[] {0}))
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(ByteString.copyFromUtf8(p + "d"))
                                    .setRangeEnd(key)
                                    .build(),
                            RangeRequest.newBuilder()
                                    .setKey(key)
                                    .setRangeEnd(end)
                                    .setSerializable(true)
                                    .build());
                    long before = node.process().pid();
                    for (RangeRequest r : requests) {
                        RangeResponse fromEtcd = e.range(r);
                        RangeResponse fromNode = n.range(r);
                        assertThat(fromNode.getKvsList()).as("%s", r).isEqualTo(fromEtcd.getKvsList());
                        assertThat(fromNode.getCount()).as("%s", r).isEqualTo(fromEtcd.getCount());
                        assertThat(fromNode.getMore()).as("%s", r).isEqualTo(fromEtcd.getMore());
                        if (!r.getSerializable()) {
                            // A linearizable read: the node's answer is at least as new as etcd's just before it.
                            assertThat(fromNode.getHeader().getRevision())
                                    .isGreaterThanOrEqualTo(fromEtcd.getHeader().getRevision());
                        }
                        assertThat(fromNode.getHeader().getClusterId())
                                .isEqualTo(fromEtcd.getHeader().getClusterId());
                    }
                    assertThat(before).isPositive();
                    Map<String, Double> m = Stack.metrics(node);
                    assertThat(m.get("watchfanout_etcd_api_ranges_from_cache_total"))
                            .isGreaterThanOrEqualTo(13.0);
                    // The revision before the node's history went to etcd; etcd answered it.
                    assertThat(m.get("watchfanout_etcd_api_forwarded_total")).isGreaterThanOrEqualTo(1.0);
                    // The cache cannot reach etcd's revision (the ingester is stopped): a linearizable read
                    // goes to etcd after --resource-version-wait, and is counted.
                    signal("STOP", ingester.pid());
                    try {
                        long fresh = kv.put(bs(p + "while-stopped"), bs("s"))
                                .get()
                                .getHeader()
                                .getRevision();
                        RangeRequest r = RangeRequest.newBuilder()
                                .setKey(ByteString.copyFromUtf8(p + "while-stopped"))
                                .build();
                        RangeResponse viaNode = n.range(r);
                        assertThat(viaNode.getKvsList())
                                .isEqualTo(e.range(r).getKvsList())
                                .hasSize(1);
                        assertThat(viaNode.getHeader().getRevision()).isGreaterThanOrEqualTo(fresh);
                        assertThat(Stack.metrics(node).get("watchfanout_etcd_api_consistent_read_fallbacks_total"))
                                .isGreaterThanOrEqualTo(1.0);
                    } finally {
                        signal("CONT", ingester.pid());
                    }
                    // An empty key is etcd's error.
                    org.assertj.core.api.Assertions.assertThatThrownBy(() -> n.range(RangeRequest.getDefaultInstance()))
                            .hasMessageContaining("INVALID_ARGUMENT")
                            .hasMessageContaining("key is not provided");
                    assertThat(ingester.isAlive()).isTrue();
                } finally {
                    toEtcd.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                    toNode.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** Watches and reads from a revision before this one go beyond the node's history. */
    private static long historyStart(Stack.Node node) throws InterruptedException {
        return Stack.metrics(node).get("watchfanout_history_start_revision").longValue();
    }

    private static void signal(String name, long pid) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + name, Long.toString(pid))
                        .inheritIO()
                        .start()
                        .waitFor())
                .isZero();
    }

    /** Puts, a put of a new version, a transaction of three keys, deletes, a lease expiring with its keys. */
    private static void writes(Client client, String p) throws Exception {
        KV kv = client.getKVClient();
        kv.put(bs(p + "a"), bs("1")).get();
        kv.put(bs(p + "k1"), bs("1")).get();
        kv.put(bs(p + "c"), bs("1")).get();
        kv.put(bs(p + "a"), bs("2")).get();
        kv.txn()
                .Then(
                        Op.put(bs(p + "b1"), bs("t"), PutOption.DEFAULT),
                        Op.put(bs(p + "c"), bs("t"), PutOption.DEFAULT),
                        Op.delete(bs(p + "a"), DeleteOption.DEFAULT))
                .commit()
                .get();
        kv.delete(bs(p + "k1")).get();
        kv.delete(bs(p + "d"), DeleteOption.builder().isPrefix(true).build()).get();
        long lease = client.getLeaseClient().grant(1).get().getID();
        for (String k : List.of("l1", "l2", "l3")) {
            kv.put(
                            bs(p + k),
                            bs("leased"),
                            PutOption.builder().withLeaseId(lease).build())
                    .get();
        }
        kv.put(bs(p + "zz"), bs("after")).get();
        await().atMost(WAIT).until(() -> kv.get(bs(p + "l1")).get().getKvs().isEmpty());
        kv.put(bs(p + "k1"), bs("again")).get();
    }

    private static List<String> events(List<WatchResponse> responses, long watchId) {
        List<String> out = new ArrayList<>();
        for (WatchResponse r : responses) {
            if (r.getWatchId() == watchId) {
                for (io.etcd.jetcd.api.Event e : r.getEventsList()) {
                    out.add(e.toString().replace('\n', ' '));
                }
            }
        }
        return out;
    }

    /** No revision's events are split across two responses, and a response's header is not older than its events. */
    private static void checkWholeRevisions(List<WatchResponse> responses, long watchId) {
        Map<Long, Integer> responseOfRevision = new HashMap<>();
        for (int i = 0; i < responses.size(); i++) {
            WatchResponse r = responses.get(i);
            if (r.getWatchId() != watchId) {
                continue;
            }
            for (io.etcd.jetcd.api.Event e : r.getEventsList()) {
                Integer seen = responseOfRevision.putIfAbsent(e.getKv().getModRevision(), i);
                assertThat(seen == null || seen == i)
                        .as("revision %d in one response", e.getKv().getModRevision())
                        .isTrue();
                assertThat(r.getHeader().getRevision())
                        .isGreaterThanOrEqualTo(e.getKv().getModRevision());
            }
        }
    }

    private static WatchCreateRequest.Builder create(String key, String rangeEnd, long start) {
        return WatchCreateRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setRangeEnd(
                        rangeEnd.equals("\0") ? ByteString.copyFrom(new byte[] {0}) : ByteString.copyFromUtf8(rangeEnd))
                .setStartRevision(start);
    }

    private static String prefixEnd(String prefix) {
        char[] c = prefix.toCharArray();
        c[c.length - 1]++;
        return new String(c);
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
