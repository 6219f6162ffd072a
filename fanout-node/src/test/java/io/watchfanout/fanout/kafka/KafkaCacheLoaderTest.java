package io.watchfanout.fanout.kafka;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.metrics.NodeMetrics;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.NodeTopics;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.TcpKeepalive;
import io.watchfanout.fanout.v1.V1Api;
import io.watchfanout.fanout.watch.CacheFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.StateEntry;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.schema.StateRecordSerializer;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateRecord;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Rebuild, readiness, a watch and fail-closed against a real Kafka broker (testkit). */
@ExtendWith(KafkaExtension.class)
@Timeout(120)
class KafkaCacheLoaderTest {
    @Test
    void rebuildsFromStateAndEventsServesAWatchAndFailsClosedOnAnUndecodableRecord(KafkaBroker kafka, TestInfo info)
            throws Exception {
        String prefix = TopicPrefixes.unique(info);
        String events = WatchFanoutSerdes.eventsTopic(prefix);
        String state = WatchFanoutSerdes.stateTopic(prefix);
        NodeTopics.create(kafka.bootstrapServers(), prefix);
        EtcdLog etcd = new EtcdLog(0);
        try (KafkaProducer<byte[], byte[]> producer = NodeTopics.producer(kafka.bootstrapServers(), prefix)) {
            // Events 1..3 are already in the state topic (checkpoint revision 3, events offset = after them).
            List<EventsRecord> first = new java.util.ArrayList<>();
            first.addAll(etcd.put("/a", "1"));
            first.addAll(etcd.put("/b", "1"));
            first.addAll(etcd.put("/c", "1"));
            LoadedCore.send(producer, events, first);
            producer.beginTransaction();
            StateRecordSerializer ss = new StateRecordSerializer();
            for (KeyValue kv : etcd.state().values()) {
                producer.send(new ProducerRecord<>(
                        state,
                        kv.getKey().toByteArray(),
                        ss.serialize(state, StateRecord.newBuilder().setKv(kv).build())));
            }
            // Offsets 0..2 hold events; offset 3 the commit marker: the next event record is at 4.
            producer.send(NodeTopics.checkpoint(state, 3, 4));
            producer.commitTransaction();
            // After the checkpoint: a transaction of two events, a delete and a progress record.
            LoadedCore.send(producer, events, etcd.txn(EtcdLog.Op.put("/a", "2"), EtcdLog.Op.put("/d", "1")));
            LoadedCore.send(producer, events, etcd.delete("/b"));
            LoadedCore.send(producer, events, List.of(etcd.progress()));

            WatchCore core =
                    new WatchCore(CoreSettings.of(1000, Duration.ofMinutes(10), 256, "kafka-test"), new FrameEncoder());
            RebuildProgress progress = new RebuildProgress();
            HttpApi api = new HttpApi(
                    core,
                    new HttpSettings(
                            Duration.ofSeconds(1),
                            1,
                            "kafka-test",
                            Duration.ofSeconds(30),
                            Duration.ofSeconds(30),
                            new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3)),
                    NodeMetrics.registry(core, progress),
                    "127.0.0.1",
                    0);
            new V1Api(core, api.settings(), AccessControl.open("kafka-test", WatchLimits.NONE), null).mountOn(api);
            api.start();
            KafkaCacheLoader loader = loader(kafka, prefix, core.feed(), progress, "kafka-test");
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            try {
                loader.start();
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> core.readiness().isRebuilt());
                assertThat(core.status().revision()).isEqualTo(etcd.revision());
                Map<?, ?> cached = core.snapshot(KeyRange.all()).stream()
                        .collect(Collectors.toMap(e -> e.kv().getKey(), StateEntry::kv));
                assertThat(cached).isEqualTo(etcd.state());
                assertThat(progress.rebuildSeconds()).isPositive();
                assertThat(client.send(
                                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/readyz"))
                                                .build(),
                                        HttpResponse.BodyHandlers.ofString())
                                .statusCode())
                        .isEqualTo(200);

                HttpResponse<InputStream> watch = client.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port()
                                        + "/v1/watch?key=%2F&prefix=true&resourceVersion=3"))
                                .build(),
                        HttpResponse.BodyHandlers.ofInputStream());
                assertThat(watch.statusCode()).isEqualTo(200);
                LoadedCore.send(producer, events, etcd.put("/e", "1"));
                BufferedReader in = new BufferedReader(new InputStreamReader(watch.body(), StandardCharsets.UTF_8));
                List<WatchEvent> got = new java.util.ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    got.add(Frames.parseJsonLine(in.readLine()));
                }
                assertThat(got)
                        .extracting(e -> e.getObject().getKey().toStringUtf8())
                        .containsExactly("/a", "/d", "/b", "/e");
                assertThat(got)
                        .extracting(WatchEvent::getType)
                        .containsExactly(
                                WatchEvent.Type.MODIFIED,
                                WatchEvent.Type.ADDED,
                                WatchEvent.Type.DELETED,
                                WatchEvent.Type.ADDED);

                // An undecodable record: the node stops serving, tells the open watch, never skips it.
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(events, key("/x").toByteArray(), new byte[] {(byte) 0xff, 1, 2}));
                producer.commitTransaction();
                LoadedCore.send(producer, events, etcd.put("/after-bad", "1"));
                WatchEvent error = Frames.parseJsonLine(in.readLine());
                assertThat(error.getType()).isEqualTo(WatchEvent.Type.ERROR);
                assertThat(error.getStatus().getCode()).isEqualTo(503);
                assertThat(error.getStatus().getMessage()).contains("undecodable record");
                assertThat(core.readiness().isRebuilt()).isFalse();
                assertThat(core.snapshot(KeyRange.single(key("/after-bad"))))
                        .as("nothing after the bad record")
                        .isEmpty();
                HttpResponse<String> kv = client.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/v1/kv?key=%2Fa"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(kv.statusCode()).isEqualTo(503);
                assertThat(client.send(
                                        HttpRequest.newBuilder(
                                                        URI.create("http://127.0.0.1:" + api.port() + "/metrics"))
                                                .build(),
                                        HttpResponse.BodyHandlers.ofString())
                                .body())
                        .contains("watchfanout_cache_failed 1.0");
            } finally {
                loader.close();
                api.stop();
            }
        }
    }

    @Test
    void anUncompactedStateTopicLoadsTheLastRecordOfEachKeyAndAKeyValueUnderAnotherKeyStopsTheRebuild(
            KafkaBroker kafka, TestInfo info) throws Exception {
        // What compaction has not reached yet: several records of a key, tombstones, a key put again after one.
        List<Map.Entry<String, KeyValue>> records = new java.util.ArrayList<>();
        records.add(Map.entry("/a", kv("/a", "a1", 1)));
        records.add(Map.entry("/b", kv("/b", "b1", 2)));
        records.add(Map.entry("/c", kv("/c", "c1", 3)));
        records.add(Map.entry("/a", kv("/a", "a2", 4)));
        records.add(new java.util.AbstractMap.SimpleEntry<String, KeyValue>("/b", null));
        records.add(new java.util.AbstractMap.SimpleEntry<String, KeyValue>("/c", null));
        records.add(Map.entry("/c", kv("/c", "c2", 7)));
        records.add(Map.entry("/e", kv("/e", "", 8)));
        records.add(Map.entry("/d", kv("/d", "x".repeat(5000), 9)));
        records.add(Map.entry("/a", kv("/a", "a3", 10)));
        Map<Object, Object> expected = Map.of(
                key("/a"), kv("/a", "a3", 10),
                key("/c"), kv("/c", "c2", 7),
                key("/d"), kv("/d", "x".repeat(5000), 9),
                key("/e"), kv("/e", "", 8));
        try (LoadedCore r = rebuild(kafka, TopicPrefixes.unique(info) + "-uncompacted", records)) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> r.core().readiness().isRebuilt());
            assertThat(r.core().snapshot(KeyRange.all()).stream()
                            .collect(Collectors.toMap(e -> e.kv().getKey(), StateEntry::kv)))
                    .isEqualTo(expected);
        }

        List<Map.Entry<String, KeyValue>> mismatched =
                List.of(Map.entry("/a", kv("/a", "a1", 1)), Map.entry("/b", kv("/not-b", "b1", 2)));
        try (LoadedCore failed = rebuild(kafka, TopicPrefixes.unique(info) + "-mismatched", mismatched)) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> failed.core().readiness().failure() != null);
            assertThat(failed.core().readiness().failure()).contains("holds the key-value of /not-b");
            assertThat(failed.core().readiness().isRebuilt()).isFalse();
        }
    }

    @Test
    void anEventsTopicTheIngesterNeverWroteToIsNotReadyUntilItsFirstRecord(KafkaBroker kafka, TestInfo info)
            throws Exception {
        String prefix = TopicPrefixes.unique(info);
        NodeTopics.create(kafka.bootstrapServers(), prefix);
        try (LoadedCore loaded = LoadedCore.start(kafka, prefix, "kafka-test")) {
            WatchCore core = loaded.core();
            RebuildProgress progress = loaded.progress();
            await().atMost(Duration.ofSeconds(60)).until(() -> "waiting for the ingester".equals(progress.phase()));
            // An empty cache would answer every list and watch wrongly: not ready, and says why.
            assertThat(core.readiness().isRebuilt()).isFalse();
            assertThat(core.readiness().notReady())
                    .contains("waits for the ingester's first record")
                    .contains(WatchFanoutSerdes.eventsTopic(prefix) + " is empty");
            assertThat(core.readiness().notServing()).contains("waits for the ingester's first record");

            EtcdLog etcd = new EtcdLog(0);
            try (KafkaProducer<byte[], byte[]> producer = NodeTopics.producer(kafka.bootstrapServers(), prefix)) {
                LoadedCore.send(producer, WatchFanoutSerdes.eventsTopic(prefix), etcd.put("/a", "1"));
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> core.readiness().isRebuilt());
            assertThat(core.readiness().notReady()).isNull();
            assertThat(core.status().revision()).isEqualTo(etcd.revision());
        }
    }

    private static KeyValue kv(String key, String value, long modRevision) {
        return KeyValue.newBuilder()
                .setKey(key(key))
                .setValue(com.google.protobuf.ByteString.copyFromUtf8(value))
                .setCreateRevision(1)
                .setModRevision(modRevision)
                .setVersion(1)
                .build();
    }

    /**
     * A core rebuilt by a loader from a state topic of {@code records} (a null key-value is a tombstone),
     * a checkpoint at revision 10 and an empty events topic.
     */
    private static LoadedCore rebuild(KafkaBroker kafka, String prefix, List<Map.Entry<String, KeyValue>> records)
            throws Exception {
        String state = WatchFanoutSerdes.stateTopic(prefix);
        NodeTopics.create(kafka.bootstrapServers(), prefix);
        try (KafkaProducer<byte[], byte[]> producer = NodeTopics.producer(kafka.bootstrapServers(), prefix)) {
            StateRecordSerializer ss = new StateRecordSerializer();
            producer.beginTransaction();
            for (Map.Entry<String, KeyValue> r : records) {
                producer.send(new ProducerRecord<>(
                        state,
                        key(r.getKey()).toByteArray(),
                        r.getValue() == null
                                ? null
                                : ss.serialize(
                                        state,
                                        StateRecord.newBuilder()
                                                .setKv(r.getValue())
                                                .build())));
            }
            producer.send(NodeTopics.checkpoint(state, 10, 0));
            producer.commitTransaction();
        }
        return LoadedCore.start(kafka, prefix, "kafka-test");
    }

    /** A loader of {@code prefix}'s topics into {@code feed}, without staleness checks or preloaded history. */
    static KafkaCacheLoader loader(
            KafkaBroker kafka, String prefix, CacheFeed feed, RebuildProgress progress, String nodeId) {
        return new KafkaCacheLoader(
                kafka.bootstrapServers(), KafkaClientSettings.NONE, prefix, feed, progress, nodeId, Duration.ZERO, 0);
    }
}
