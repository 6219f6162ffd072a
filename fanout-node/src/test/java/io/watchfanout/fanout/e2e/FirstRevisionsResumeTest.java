package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.WatchClient;
import io.watchfanout.testkit.WatchClient.Encoding;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The revisions right after the ingester's first resynchronisation are all servable: on an empty
 * etcd (revision 1) the ingester publishes an initial resync at revision 1 with no keys, then the
 * first writes come as revisions 2, 3, ... A node that started before the first write, one that
 * started after it, one started after it with a window too small to reach back, and one started
 * before it whose window let the first revisions go by age (so that they come from the events
 * topic on those two) each resume from every one of the first five
 * revisions over the etcd API ({@code start_revision} R: events {@code >= R}), HTTP JSON and SSE
 * ({@code resourceVersion} R - 1: events {@code > R - 1}), with exactly etcd's events; and from the
 * resync's own revision ({@code resourceVersion=1}).
 */
@ExtendWith(KafkaExtension.class)
class FirstRevisionsResumeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int WRITES = 12;
    private final KafkaBroker kafka;

    FirstRevisionsResumeTest(KafkaBroker kafka) {
        this.kafka = kafka;
    }

    @Test
    void everyRevisionAfterTheInitialResyncIsServableOnEveryNodeAndFrontEnd(TestInfo info) throws Exception {
        // An etcd of its own: the initial resync must be at revision 1, of an empty store.
        try (EtcdServer etcd = new EtcdServer().start();
                EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            stack.ingester.awaitLog("published a resync (INITIAL)", WAIT);
            Stack.Node early = stack.node("first-early");
            Stack.Node earlyAged = stack.node("first-early-aged", "--history-max-age", "1s");
            KV kv = stack.kv();
            long last = 0;
            for (int i = 0; i < WRITES; i++) {
                String key = stack.keys + "k" + (i % 4);
                last = i == WRITES - 1
                        ? kv.delete(EtcdApiStack.bs(key)).get().getHeader().getRevision()
                        : kv.put(EtcdApiStack.bs(key), EtcdApiStack.bs("v" + i))
                                .get()
                                .getHeader()
                                .getRevision();
            }
            assertThat(last).as("the writes are revisions 2.." + (WRITES + 1)).isEqualTo(WRITES + 1);
            Stack.Node late = stack.node("first-late");
            Stack.Node lateSmall = stack.node("first-late-small", "--history-max-events", "3");
            await().atMost(WAIT)
                    .until(() -> Stack.metrics(earlyAged).getOrDefault("watchfanout_history_start_revision", 0.0) >= 6);
            for (Stack.Node node : List.of(early, earlyAged, late, lateSmall)) {
                for (long rev = 2; rev <= 6; rev++) {
                    assertEtcdApiResumes(stack, node, rev, last);
                    assertHttpResumes(stack, node, rev - 1, last, Encoding.JSON);
                    assertHttpResumes(stack, node, rev - 1, last, Encoding.SSE);
                }
                assertHttpResumes(stack, node, 1, last, Encoding.PROTOBUF);
            }
            for (Stack.Node node : List.of(earlyAged, lateSmall)) {
                assertThat(Stack.metrics(node).get("watchfanout_resumes_from_kafka_total"))
                        .as(node + ": the first revisions came from the events topic")
                        .isPositive();
            }
        }
    }

    /**
     * Writes made before the ingester's first snapshot (as on an etcd that a cluster has used for a
     * while before the tier starts) are history the tier serves, as etcd does: the ingester's
     * history starts at etcd's oldest revision, so each node resumes from every one of those
     * revisions over the etcd API, HTTP and the Kubernetes API, with exactly etcd's events.
     */
    @Test
    void writesMadeBeforeTheIngestersFirstSnapshotAreServable(TestInfo info) throws Exception {
        try (EtcdServer etcd = new EtcdServer().start()) {
            long[] last = new long[1];
            String namespace = "race";
            try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka, s -> {
                KV kv = s.kv();
                for (int i = 0; i < WRITES; i++) {
                    String key = s.keys + "k" + (i % 4);
                    last[0] = i == WRITES - 1
                            ? kv.delete(EtcdApiStack.bs(key)).get().getHeader().getRevision()
                            : kv.put(EtcdApiStack.bs(key), EtcdApiStack.bs("v" + i))
                                    .get()
                                    .getHeader()
                                    .getRevision();
                }
                // Kubernetes objects as kube-apiserver may store them (JSON), at revisions last+1..last+3.
                for (int i = 0; i < 3; i++) {
                    kv.put(
                                    EtcdApiStack.bs("/registry/configmaps/" + namespace + "/cm-" + i),
                                    EtcdApiStack.bs("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                                            + "{\"name\":\"cm-" + i + "\",\"namespace\":\"" + namespace
                                            + "\",\"uid\":\"u-" + i + "\",\"creationTimestamp\":"
                                            + "\"2026-12-07T00:00:00Z\"},\"data\":{\"k\":\"" + i + "\"}}"))
                            .get();
                }
            })) {
                assertThat(last[0])
                        .as("the writes are revisions 2.." + (WRITES + 1))
                        .isEqualTo(WRITES + 1);
                stack.ingester.awaitLog("published a resync (INITIAL)", WAIT);
                Stack.Node node = stack.node("race-node");
                for (long rev = 2; rev <= 6; rev++) {
                    assertEtcdApiResumes(stack, node, rev, last[0]);
                    assertHttpResumes(stack, node, rev - 1, last[0], Encoding.JSON);
                }
                assertHttpResumes(stack, node, 1, last[0], Encoding.PROTOBUF);
                // The Kubernetes API: a watch from the revision before the first config map sees all three.
                HttpResponse<String> watch = Stack.get(node.url() + "/api/v1/namespaces/" + namespace
                        + "/configmaps?watch=1&timeoutSeconds=3&resourceVersion=" + last[0]);
                assertThat(watch.statusCode()).isEqualTo(200);
                assertThat(watch.body().lines().filter(l -> !l.isBlank()))
                        .hasSize(3)
                        .allMatch(l -> l.startsWith("{\"type\":\"ADDED\""))
                        .anyMatch(l -> l.contains("\"resourceVersion\":\"" + (last[0] + 1) + "\""))
                        .anyMatch(l -> l.contains("\"resourceVersion\":\"" + (last[0] + 3) + "\""));
            }
        }
    }

    private static void assertHttpResumes(
            EtcdApiStack stack, Stack.Node node, long resourceVersion, long last, Encoding encoding) throws Exception {
        String name = node.process() + " " + encoding + " resourceVersion=" + resourceVersion;
        try (WatchClient c = new WatchClient(name, stack.keys, "prefix", encoding)) {
            assertThat(c.connect(node.url(), resourceVersion)).as(name).isEqualTo(200);
            await().atMost(WAIT).until(() -> c.lastResourceVersion() >= last || c.ended());
            assertThat(c.frames()).as(name).noneMatch(f -> f.getType() == WatchEvent.Type.ERROR);
            List<Expected.Frame> expected = Expected.directWatch(
                    stack.etcdClient,
                    ByteString.copyFromUtf8(stack.keys),
                    prefixEnd(stack.keys),
                    resourceVersion,
                    last);
            assertThat(expected).as(name).hasSize((int) (last - resourceVersion));
            assertThat(Expected.received(c.frames())).as(name).containsExactlyElementsOf(expected);
        }
    }

    private static void assertEtcdApiResumes(EtcdApiStack stack, Stack.Node node, long startRevision, long last)
            throws Exception {
        String name = node.process() + " etcd API start_revision=" + startRevision;
        WatchRequest req = WatchRequest.newBuilder()
                .setCreateRequest(WatchCreateRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8(stack.keys))
                        .setRangeEnd(prefixEnd(stack.keys))
                        .setStartRevision(startRevision)
                        .setPrevKv(true))
                .build();
        try (RawWatchStream onEtcd = new RawWatchStream(stack.etcdChannel());
                RawWatchStream onNode = new RawWatchStream(stack.channel(node))) {
            onEtcd.send(req);
            onNode.send(req);
            onEtcd.await(r -> reached(r, last), WAIT);
            onNode.await(r -> reached(r, last) || r.getCanceled(), WAIT);
            assertThat(onNode.received).as(name).noneMatch(WatchResponse::getCanceled);
            assertThat(onNode.eventLines())
                    .as(name)
                    .isEqualTo(onEtcd.eventLines())
                    .hasSize((int) (last - startRevision + 1));
        }
    }

    private static boolean reached(WatchResponse r, long last) {
        return r.getEventsList().stream().anyMatch(e -> e.getKv().getModRevision() == last);
    }

    private static ByteString prefixEnd(String p) {
        byte[] b = p.getBytes(StandardCharsets.UTF_8);
        b[b.length - 1]++;
        return ByteString.copyFrom(b);
    }
}
