package io.watchfanout.kube.kafka;

import static io.watchfanout.kube.kafka.RawEvents.kv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.kube.kafka.KubeEventDecoder.SecretPolicy;
import io.watchfanout.kube.kafka.streams.KubeTopicNames;
import io.watchfanout.kube.kafka.streams.KubeTopicsApp;
import io.watchfanout.kube.kafka.streams.ResourceFilter;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The application's topics read by clients written elsewhere, as an operator would read them:
 * kcat (librdkafka) on a change topic, and a Kafka Streams application of its own that builds a
 * table of pods from the compacted latest-object topic with the module's Serdes.
 */
@ExtendWith(KafkaExtension.class)
class KubeTopicsClientsTest {
    private static final Path KCAT = Path.of("/usr/bin/kcat");

    @TempDir
    Path stateDir;

    @TempDir
    Path consumerStateDir;

    /**
     * Pods scheduled, moved and deleted: web-0 on node-1, web-1 on node-2 then moved to node-1,
     * web-2 on node-2 then deleted, api-0 on node-2.
     */
    private static void writeEvents(KafkaBroker kafka, String prefix) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(WatchFanoutSerdes.eventsTopic(prefix), 1, (short) 1)))
                    .all()
                    .get();
        }
        KeyValue web0 = kv("/registry/pods/team-a/web-0", RawEvents.pod("team-a", "web-0", "node-1"), 2, 2, 1);
        KeyValue web1 = kv("/registry/pods/team-a/web-1", RawEvents.pod("team-a", "web-1", "node-2"), 3, 3, 1);
        KeyValue web2 = kv("/registry/pods/team-a/web-2", RawEvents.pod("team-a", "web-2", "node-2"), 4, 4, 1);
        KeyValue api0 = kv("/registry/pods/team-b/api-0", RawEvents.pod("team-b", "api-0", "node-2"), 5, 5, 1);
        KeyValue web1Moved = kv("/registry/pods/team-a/web-1", RawEvents.pod("team-a", "web-1", "node-1"), 3, 6, 2);
        try (KafkaProducer<byte[], EventsRecord> producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                Serdes.ByteArray().serializer(),
                WatchFanoutSerdes.eventsRecord().serializer())) {
            String topic = WatchFanoutSerdes.eventsTopic(prefix);
            producer.send(new ProducerRecord<>(topic, RawEvents.put(web0, null, 1)));
            producer.send(new ProducerRecord<>(topic, RawEvents.put(web1, null, 2)));
            producer.send(new ProducerRecord<>(topic, RawEvents.put(web2, null, 3)));
            producer.send(new ProducerRecord<>(topic, RawEvents.put(api0, null, 4)));
            producer.send(new ProducerRecord<>(topic, RawEvents.put(web1Moved, web1, 5)));
            producer.send(new ProducerRecord<>(topic, RawEvents.delete(web2, 7, 6)));
            producer.flush();
        }
    }

    private KubeTopicsApp app(KafkaBroker kafka, String prefix) {
        return new KubeTopicsApp(
                kafka.bootstrapServers(),
                KafkaClientSettings.NONE,
                prefix,
                "/registry",
                1,
                (short) 1,
                SecretPolicy.REDACT,
                ResourceFilter.of(List.of("pods"), List.of()),
                stateDir);
    }

    @Test
    void kcatReadsTheWatchEventsAndTheirCloudEventsHeaders(KafkaBroker kafka, TestInfo info) throws Exception {
        assertThat(Files.isExecutable(KCAT)).as(KCAT + " (Debian package kcat)").isTrue();
        String prefix = TopicPrefixes.unique(info);
        writeEvents(kafka, prefix);
        try (KubeTopicsApp app = app(kafka, prefix)) {
            app.start();
            String topic = KubeTopicNames.changes(prefix, "pods");
            String[] out = new String[1];
            await("kcat reads the six watch events of " + topic)
                    .atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofSeconds(1))
                    .until(() -> {
                        out[0] = kcat(
                                "-C",
                                "-b",
                                kafka.bootstrapServers(),
                                "-t",
                                topic,
                                "-X",
                                "isolation.level=read_committed",
                                "-o",
                                "beginning",
                                "-f",
                                "%h %s\\n",
                                "-e");
                        return out[0].lines()
                                        .filter(l -> l.contains("ce_type="))
                                        .count()
                                >= 6;
                    });
            List<String> lines =
                    out[0].lines().filter(l -> l.contains("ce_type=")).toList();
            assertThat(lines).hasSize(6);
            String first = lines.get(0);
            assertThat(first)
                    .contains("ce_specversion=1.0")
                    .contains("ce_type=io.watchfanout.kube.added")
                    .contains("ce_source=//watch-fanout/" + prefix)
                    .contains("ce_subject=/api/v1/namespaces/team-a/pods/web-0")
                    .contains("ce_etcdrevision=2")
                    .contains("ce_prevresourceversion=0")
                    .contains("content-type=application/json")
                    .contains("{\"type\":\"ADDED\",\"object\":{")
                    .contains("\"kind\":\"Pod\"")
                    .contains("\"nodeName\":\"node-1\"");
            assertThat(lines.get(4))
                    .contains("ce_type=io.watchfanout.kube.modified")
                    .contains("ce_prevresourceversion=3")
                    .contains("\"nodeName\":\"node-1\"");
            assertThat(lines.get(5))
                    .contains("ce_type=io.watchfanout.kube.deleted")
                    .contains("{\"type\":\"DELETED\",");
        }
    }

    @Test
    void aStreamsTableOfTheLatestPodsCountsPodsPerNode(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        writeEvents(kafka, prefix);
        try (KubeTopicsApp app = app(kafka, prefix)) {
            app.start();
            // A Streams application stops on a missing source topic: start it once the topic is made.
            try (Admin admin =
                    Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                await("the application creates " + KubeTopicNames.latest(prefix, "pods"))
                        .atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> admin.listTopics().names().get().contains(KubeTopicNames.latest(prefix, "pods")));
            }
            StreamsBuilder builder = new StreamsBuilder();
            builder.table(KubeTopicNames.latest(prefix, "pods"), Consumed.with(Serdes.String(), KubeSerdes.object()))
                    .groupBy(
                            (key, pod) -> org.apache.kafka.streams.KeyValue.pair(nodeName(pod), pod),
                            Grouped.with(Serdes.String(), KubeSerdes.object()))
                    .count(Materialized.as("pods-per-node"));
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, prefix + ".pods-per-node");
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            props.put(StreamsConfig.STATE_DIR_CONFIG, consumerStateDir.toString());
            props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
            props.put(StreamsConfig.consumerPrefix(ConsumerConfig.ISOLATION_LEVEL_CONFIG), "read_committed");
            props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
            try (KafkaStreams counts = new KafkaStreams(builder.build(), props)) {
                counts.start();
                Map<String, Long> expected = Map.of("node-1", 2L, "node-2", 1L);
                await("pods per node from " + KubeTopicNames.latest(prefix, "pods"))
                        .atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(500))
                        .ignoreExceptions() // the store is not queryable while the instance rebalances
                        .until(() -> podsPerNode(counts), expected::equals);
            }
        }
    }

    /** The pod's {@code spec.nodeName}; null (no row) for a pod not scheduled. */
    private static String nodeName(JsonObject pod) {
        JsonObject spec = pod.getAsJsonObject("spec");
        JsonElement node = spec == null ? null : spec.get("nodeName");
        return node == null ? null : node.getAsString();
    }

    /** The count table as a map, nodes that lost every pod (count 0) left out. */
    private static Map<String, Long> podsPerNode(KafkaStreams streams) {
        ReadOnlyKeyValueStore<String, Long> store = streams.store(
                StoreQueryParameters.fromNameAndType("pods-per-node", QueryableStoreTypes.keyValueStore()));
        Map<String, Long> out = new HashMap<>();
        try (KeyValueIterator<String, Long> it = store.all()) {
            it.forEachRemaining(e -> {
                if (e.value != null && e.value > 0) {
                    out.put(e.key, e.value);
                }
            });
        }
        return out;
    }

    /**
     * Runs kcat; its standard output (errors go to the test's log), or empty while kcat fails (the
     * application may not have created the topic yet: "Unknown topic or partition").
     */
    private static String kcat(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>();
        command.add(KCAT.toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor() == 0 ? out : "";
    }
}
