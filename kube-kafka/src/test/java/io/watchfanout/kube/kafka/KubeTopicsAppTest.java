package io.watchfanout.kube.kafka;

import static io.watchfanout.kube.kafka.RawEvents.kv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.kube.kafka.KubeEventDecoder.SecretPolicy;
import io.watchfanout.kube.kafka.streams.KubeTopicNames;
import io.watchfanout.kube.kafka.streams.KubeTopicsApp;
import io.watchfanout.kube.kafka.streams.KubeTopicsMain;
import io.watchfanout.kube.kafka.streams.ResourceFilter;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The Kubernetes topics application against a real broker: raw events in, per-resource topics out. */
@ExtendWith(KafkaExtension.class)
class KubeTopicsAppTest {
    private static final String POD_KEY = "/registry/pods/team-a/web-0";

    @TempDir
    Path stateDir;

    @Test
    void publishesChangesLatestObjectsAndErrorsOfTheRawEvents(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        KeyValue v1 = kv(POD_KEY, RawEvents.pod("team-a", "web-0", ""), 5, 5, 1);
        KeyValue v2 = kv(POD_KEY, RawEvents.pod("team-a", "web-0", "node-1"), 5, 8, 2);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            // The ingester creates the events topic; the broker creates no topic on first use.
            admin.createTopics(List.of(new NewTopic(WatchFanoutSerdes.eventsTopic(prefix), 1, (short) 1)))
                    .all()
                    .get();
        }
        try (KafkaProducer<byte[], EventsRecord> producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                Serdes.ByteArray().serializer(),
                WatchFanoutSerdes.eventsRecord().serializer())) {
            String topic = WatchFanoutSerdes.eventsTopic(prefix);
            producer.send(new ProducerRecord<>(topic, RawEvents.put(v1, null, 4)));
            producer.send(new ProducerRecord<>(topic, RawEvents.put(v2, v1, 5)));
            producer.send(new ProducerRecord<>(
                    topic,
                    RawEvents.put(
                            kv(
                                    "/registry/secrets/team-a/db",
                                    RawEvents.secret("team-a", "db", "password", "hunter2"),
                                    9,
                                    9,
                                    1),
                            null,
                            8)));
            producer.send(new ProducerRecord<>(topic, RawEvents.delete(v2, 10, 9)));
            producer.send(new ProducerRecord<>(
                    topic,
                    RawEvents.put(
                            kv("/registry/pods/team-a/bad", "garbage".getBytes(StandardCharsets.UTF_8), 11, 11, 1),
                            null,
                            10)));
            producer.flush();
        }

        try (KubeTopicsApp app = new KubeTopicsApp(
                kafka.bootstrapServers(),
                KafkaClientSettings.NONE,
                prefix,
                "/registry",
                2,
                (short) 1,
                SecretPolicy.REDACT,
                ResourceFilter.of(List.of("pods", "secrets"), List.of()),
                stateDir)) {
            app.start();
            List<ConsumerRecord<String, KubeWatchEvent>> pods = read(
                    kafka,
                    KubeTopicNames.changes(prefix, "pods"),
                    KubeSerdes.watchEvent().deserializer(),
                    3);
            assertThat(pods)
                    .extracting(r -> r.value().type())
                    .containsExactly(
                            KubeWatchEvent.Type.ADDED, KubeWatchEvent.Type.MODIFIED, KubeWatchEvent.Type.DELETED);
            assertThat(pods).extracting(r -> r.value().resourceVersion()).containsExactly(5L, 8L, 10L);
            assertThat(pods).extracting(ConsumerRecord::key).containsOnly("team-a/web-0");
            assertThat(header(pods.get(1), CloudEventHeaders.TYPE)).isEqualTo("io.watchfanout.kube.modified");
            assertThat(header(pods.get(1), CloudEventHeaders.PREVIOUS_RESOURCE_VERSION))
                    .isEqualTo("5");
            assertThat(header(pods.get(1), CloudEventHeaders.SOURCE)).isEqualTo("//watch-fanout/" + prefix);
            ObjectContinuity continuity = new ObjectContinuity();
            pods.forEach(r -> continuity.accept(r.value()));

            List<ConsumerRecord<String, JsonObject>> latest = read(
                    kafka,
                    KubeTopicNames.latest(prefix, "pods"),
                    KubeSerdes.object().deserializer(),
                    3);
            assertThat(latest.get(2).value())
                    .as("the tombstone of the deletion")
                    .isNull();

            List<ConsumerRecord<String, KubeWatchEvent>> secrets = read(
                    kafka,
                    KubeTopicNames.changes(prefix, "secrets"),
                    KubeSerdes.watchEvent().deserializer(),
                    1);
            assertThat(new String(secrets.get(0).value().object(), StandardCharsets.UTF_8))
                    .doesNotContain("aHVudGVyMg")
                    .contains(SecretRedaction.ANNOTATION);

            List<ConsumerRecord<String, String>> errors =
                    read(kafka, KubeTopicNames.errors(prefix), Serdes.String().deserializer(), 1);
            JsonObject error = JsonParser.parseString(errors.get(0).value()).getAsJsonObject();
            assertThat(error.get("key").getAsString()).isEqualTo("/registry/pods/team-a/bad");
            assertThat(error.get("revision").getAsLong()).isEqualTo(11);
            assertThat(error.get("reason").getAsString()).isEqualTo("CORRUPT");
            await().until(app::ready);
            assertThat(app.metrics().prometheusText(System.currentTimeMillis()))
                    .contains("watchfanout_kube_undecodable_total{reason=\"corrupt\"} 1");
            // Revision 11 is the topic's newest and the last processed: no lag once its end was read.
            await().until(() -> app.metrics().newestRevision() == 11);
            assertThat(app.metrics().lagRevisions()).isZero();
        }
    }

    @Test
    void withoutTheEventsTopicItStopsNotReadyRatherThanRetryingInALoop(KafkaBroker kafka, TestInfo info) {
        String prefix = TopicPrefixes.unique(info);
        try (KubeTopicsApp app = new KubeTopicsApp(
                kafka.bootstrapServers(),
                KafkaClientSettings.NONE,
                prefix,
                "/registry",
                1,
                (short) 1,
                SecretPolicy.REDACT,
                ResourceFilter.of(List.of("pods"), List.of()),
                stateDir)) {
            app.start();
            await().atMost(Duration.ofMinutes(2))
                    .until(() -> app.state() == org.apache.kafka.streams.KafkaStreams.State.ERROR
                            || app.state() == org.apache.kafka.streams.KafkaStreams.State.PENDING_ERROR);
            assertThat(app.ready()).isFalse();
        }
    }

    @Test
    void aBadFlagIsAUsageError() {
        StringWriter err = new StringWriter();
        CommandLine cli = KubeTopicsMain.commandLine().setErr(new PrintWriter(err));
        assertThat(cli.execute("--kafka-bootstrap", "127.0.0.1:9092", "--partitions", "0"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--partitions: 0 (expected:");
    }

    private static <V> List<ConsumerRecord<String, V>> read(
            KafkaBroker kafka, String topic, Deserializer<V> values, int count) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<String, V>> out = new ArrayList<>();
        try (KafkaConsumer<String, V> consumer =
                new KafkaConsumer<>(props, Serdes.String().deserializer(), values)) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofMinutes(2)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
                return out.size() >= count;
            });
        }
        return out;
    }

    private static String header(ConsumerRecord<?, ?> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }
}
