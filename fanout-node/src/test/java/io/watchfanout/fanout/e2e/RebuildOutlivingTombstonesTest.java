package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.StackLauncher;
import io.watchfanout.testkit.TestPrefix;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose rebuild is held in the middle of its read of the state topic while keys are
 * deleted (the real ingester, Kafka's real cleaner, the node as a process): with a short
 * {@code delete.retention.ms} the cleaner removes both the keys' values and their tombstones
 * before the read gets to them, so the read is dropped and started again, and the node serves
 * exactly etcd's keys; with the default retention the same read is served as it is. A node that
 * no read can satisfy says so on {@code /readyz} and heeds a new setting at its next read.
 *
 * <p>The hold is the node's test hook (a file that the read waits on after a fetch that brought
 * key-values); the node fetches one record batch at a time ({@code max.partition.fetch.bytes=1}
 * in its {@code --kafka-config}), so that the hold comes with most of the topic still unread.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class RebuildOutlivingTombstonesTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int GROUPS = 10;
    private static final int KEYS_PER_GROUP = 30;

    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    @TempDir
    Path dir;

    RebuildOutlivingTombstonesTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void aReadThatOutlivedTheTombstonesStartsOverAndServesExactlyEtcdsKeys(TestInfo info) throws Exception {
        Map<String, Double> metrics = rebuildAcrossDeletes(info, Duration.ofSeconds(4));
        assertThat(metrics.get("watchfanout_rebuild_restarts_total")).isGreaterThanOrEqualTo(1);
        assertThat(metrics.get("watchfanout_state_delete_retention_seconds")).isEqualTo(4.0);
    }

    @Test
    void aReadWithinTheRetentionIsServedWithoutRestart(TestInfo info) throws Exception {
        Map<String, Double> metrics = rebuildAcrossDeletes(info, null);
        assertThat(metrics.get("watchfanout_rebuild_restarts_total")).isZero();
        assertThat(metrics.get("watchfanout_state_delete_retention_seconds")).isEqualTo(86_400.0);
    }

    @Test
    void aRebuildThatCannotFinishInTimeSaysSoAndHeedsANewSetting(TestInfo info) throws Exception {
        TestPrefix prefix = TestPrefix.unique(info);
        String stateTopic = WatchFanoutSerdes.stateTopic(prefix.topicPrefix());
        try (JavaProcess ingester = Stack.ingester(etcd.clientUrl(), kafka.bootstrapServers(), prefix.topicPrefix());
                Client client = Client.builder().endpoints(etcd.clientUrl()).build();
                Admin admin = admin()) {
            client.getKVClient().put(bs(prefix.keyPrefix() + "a"), bs("a")).get();
            await("the state topic holds the key")
                    .atMost(WAIT)
                    .until(() -> read(stateTopic).containsKey(prefix.keyPrefix() + "a"));
            // No read is quick enough for a retention of 0: every one starts over.
            alter(admin, stateTopic, Map.of(TopicConfig.DELETE_RETENTION_MS_CONFIG, "0"));
            int port = FreePorts.pick();
            String url = "http://127.0.0.1:" + port;
            try (JavaProcess node = StackLauncher.on(null, kafka.bootstrapServers(), prefix.topicPrefix())
                    .node(
                            JavaProcess.builder("io.watchfanout.fanout.FanoutNodeMain")
                                    .name("slow-node")
                                    .maxHeap("256m"),
                            port,
                            "slow-node")
                    .start()) {
                await("the node says that its rebuild cannot finish in time")
                        .atMost(WAIT)
                        .until(() -> Stack.get(url + "/readyz").body().contains("cannot finish in time"));
                var readyz = Stack.get(url + "/readyz");
                assertThat(readyz.statusCode()).isEqualTo(503);
                assertThat(readyz.body()).contains("delete.retention.ms=0").contains(stateTopic);
                assertThat(Stack.get(url + "/v1/kv?key=" + prefix.keyPrefix() + "&prefix=true")
                                .statusCode())
                        .isEqualTo(503);

                // The next read learns the new setting and is served.
                alter(admin, stateTopic, Map.of(TopicConfig.DELETE_RETENTION_MS_CONFIG, "86400000"));
                StackLauncher.awaitReady(node, "slow-node", url + "/readyz", WAIT, () -> {});
                assertThat(listed(url, prefix.keyPrefix())).containsExactly(prefix.keyPrefix() + "a");
                Map<String, Double> metrics = StackLauncher.metrics(url + "/metrics");
                assertThat(metrics.get("watchfanout_rebuild_restarts_total")).isGreaterThan(3);
                assertThat(metrics.get("watchfanout_state_delete_retention_seconds"))
                        .isEqualTo(86_400.0);
                assertThat(ingester.isAlive()).isTrue();
            }
        }
    }

    /**
     * Writes keys, starts a node whose read of the state topic holds after its first key-values,
     * deletes most keys, lets the cleaner act ({@code deleteRetention} set on the state topic, or
     * the topic's own day when null), releases the read and checks that the node serves exactly
     * etcd's keys.
     *
     * @return the node's metrics once it is ready
     */
    private Map<String, Double> rebuildAcrossDeletes(TestInfo info, Duration deleteRetention) throws Exception {
        TestPrefix prefix = TestPrefix.unique(info);
        String stateTopic = WatchFanoutSerdes.stateTopic(prefix.topicPrefix());
        String deleted = prefix.keyPrefix() + "p/";
        try (JavaProcess ingester = Stack.ingester(etcd.clientUrl(), kafka.bootstrapServers(), prefix.topicPrefix());
                Client client = Client.builder().endpoints(etcd.clientUrl()).build();
                Admin admin = admin()) {
            String value = "v".repeat(200);
            for (int g = 0; g < GROUPS; g++) {
                for (int k = 0; k < KEYS_PER_GROUP; k++) {
                    client.getKVClient()
                            .put(bs(deleted + "g" + g + "/k" + k), bs(value))
                            .get();
                }
            }
            client.getKVClient().put(bs(prefix.keyPrefix() + "keep/a"), bs("a")).get();
            client.getKVClient().put(bs(prefix.keyPrefix() + "keep/b"), bs("b")).get();
            await("the state topic holds every key")
                    .atMost(WAIT)
                    .until(() -> read(stateTopic).values().stream()
                                    .filter(r -> r.value)
                                    .count()
                            >= GROUPS * KEYS_PER_GROUP + 2);
            if (deleteRetention != null) {
                // The cleaner acts fast: new segments every 200 ms, any dirty ratio cleans.
                alter(
                        admin,
                        stateTopic,
                        Map.of(
                                TopicConfig.DELETE_RETENTION_MS_CONFIG, Long.toString(deleteRetention.toMillis()),
                                TopicConfig.SEGMENT_MS_CONFIG, "200",
                                TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG, "0.01"));
            }

            Path hold = Files.createFile(dir.resolve("hold"));
            Path kafkaConfig = dir.resolve("kafka.properties");
            Files.writeString(
                    kafkaConfig,
                    ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG + "=1\n" + ConsumerConfig.FETCH_MAX_BYTES_CONFIG
                            + "=1\n");
            int port = FreePorts.pick();
            try (JavaProcess node = StackLauncher.on(null, kafka.bootstrapServers(), prefix.topicPrefix())
                    .node(
                            JavaProcess.builder("io.watchfanout.fanout.FanoutNodeMain")
                                    .name("held-node")
                                    .maxHeap("256m")
                                    .systemProperty("watchfanout.test.holdStateReadWhileExists", hold.toString()),
                            port,
                            "held-node")
                    .args("--kafka-config", kafkaConfig.toString())
                    .start()) {
                node.awaitLog("holding the read of", WAIT);

                for (int g = 0; g < GROUPS; g++) {
                    client.getKVClient()
                            .delete(
                                    bs(deleted + "g" + g + "/"),
                                    DeleteOption.builder().isPrefix(true).build())
                            .get();
                }
                if (deleteRetention != null) {
                    await("the cleaner removed the deleted keys' values and tombstones")
                            .atMost(WAIT)
                            .pollInterval(Duration.ofMillis(500))
                            .until(() -> read(stateTopic).keySet().stream().noneMatch(k -> k.startsWith(deleted)));
                } else {
                    await("the state topic holds the tombstones")
                            .atMost(WAIT)
                            .until(() -> read(stateTopic).entrySet().stream()
                                            .filter(e -> e.getKey().startsWith(deleted) && !e.getValue().value)
                                            .count()
                                    == GROUPS * KEYS_PER_GROUP);
                }
                Files.delete(hold);

                String url = "http://127.0.0.1:" + port;
                StackLauncher.awaitReady(node, "held-node", url + "/readyz", WAIT, () -> {});
                Set<String> inEtcd = new TreeSet<>();
                client.getKVClient()
                        .get(
                                bs(prefix.keyPrefix()),
                                GetOption.builder().isPrefix(true).build())
                        .get()
                        .getKvs()
                        .forEach(kv -> inEtcd.add(kv.getKey().toString(StandardCharsets.UTF_8)));
                assertThat(inEtcd).containsExactly(prefix.keyPrefix() + "keep/a", prefix.keyPrefix() + "keep/b");
                assertThat(listed(url, prefix.keyPrefix())).isEqualTo(inEtcd);
                if (deleteRetention != null) {
                    assertThat(node.logTail(400)).contains("starts over");
                }
                assertThat(ingester.isAlive()).isTrue();
                return StackLauncher.metrics(url + "/metrics");
            }
        }
    }

    /** The keys a node lists under {@code prefix}. */
    private static Set<String> listed(String url, String prefix) throws Exception {
        var response =
                Stack.get(url + "/v1/kv?key=" + URLEncoder.encode(prefix, StandardCharsets.UTF_8) + "&prefix=true");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        Set<String> keys = new TreeSet<>();
        JsonElement kvs =
                JsonParser.parseString(response.body()).getAsJsonObject().get("kvs");
        if (kvs != null) {
            for (JsonElement kv : kvs.getAsJsonArray()) {
                keys.add(new String(
                        Base64.getDecoder()
                                .decode(kv.getAsJsonObject().get("key").getAsString()),
                        StandardCharsets.UTF_8));
            }
        }
        return keys;
    }

    /** The last record of a key in the state topic: a value, or a tombstone. */
    private record Last(boolean value) {}

    /** Every key of the state topic (the checkpoint's empty key aside) with its last record, read to the end. */
    private Map<String, Last> read(String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, Last> out = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition()))
                    .collect(Collectors.toCollection(ArrayList::new));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.key().length > 0) {
                        out.put(new String(r.key(), StandardCharsets.UTF_8), new Last(r.value() != null));
                    }
                }
            }
        }
        return out;
    }

    private Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        return Admin.create(p);
    }

    private static void alter(Admin admin, String topic, Map<String, String> configs) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        List<AlterConfigOp> ops = configs.entrySet().stream()
                .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET))
                .toList();
        admin.incrementalAlterConfigs(Map.of(r, ops)).all().get();
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
