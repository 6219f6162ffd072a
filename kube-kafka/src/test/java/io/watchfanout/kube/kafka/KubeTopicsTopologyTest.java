package io.watchfanout.kube.kafka;

import static io.watchfanout.kube.kafka.RawEvents.kv;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.watchfanout.kube.kafka.KubeEventDecoder.SecretPolicy;
import io.watchfanout.kube.kafka.streams.KubeTopicNames;
import io.watchfanout.kube.kafka.streams.KubeTopicsMetrics;
import io.watchfanout.kube.kafka.streams.KubeTopicsTopology;
import io.watchfanout.kube.kafka.streams.ResourceFilter;
import io.watchfanout.kube.kafka.streams.TopicEnsurer;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Progress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Kubernetes topics topology without a broker ({@link TopologyTestDriver}). */
class KubeTopicsTopologyTest {
    private static final String PREFIX = "wf";
    private static final Instant TIME = Instant.parse("2025-01-02T03:04:05Z");
    private static final String POD_KEY = "/registry/pods/team-a/web-0";

    @TempDir
    Path stateDir;

    private final Set<String> created = ConcurrentHashMap.newKeySet();
    private final KubeTopicsMetrics metrics = new KubeTopicsMetrics();
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], EventsRecord> events;

    private final TopicEnsurer recording = new TopicEnsurer() {
        @Override
        public void ensure(Collection<String> topics, Retention retention) {
            created.addAll(topics);
        }
    };

    @BeforeEach
    void start() {
        driver = driver(ResourceFilter.of(List.of(), List.of("events", "events.events.k8s.io")));
    }

    private TopologyTestDriver driver(ResourceFilter filter) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "kube-topics-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        TopologyTestDriver d = new TopologyTestDriver(
                KubeTopicsTopology.build(
                        PREFIX, "/registry", SecretPolicy.REDACT, filter, "//test", recording, metrics),
                props);
        events = d.createInputTopic(
                WatchFanoutSerdes.eventsTopic(PREFIX),
                Serdes.ByteArray().serializer(),
                WatchFanoutSerdes.eventsRecord().serializer());
        return d;
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    @Test
    void eachEventReachesItsResourcesChangeAndLatestTopics() {
        KeyValue v1 = kv(POD_KEY, RawEvents.pod("team-a", "web-0", ""), 5, 5, 1);
        KeyValue v2 = kv(POD_KEY, RawEvents.pod("team-a", "web-0", "node-1"), 5, 8, 2);
        events.pipeInput(null, RawEvents.put(v1, null, 4), TIME);
        events.pipeInput(
                null,
                EventsRecord.newBuilder()
                        .setProgress(Progress.newBuilder().setRevision(6))
                        .build(),
                TIME);
        events.pipeInput(null, RawEvents.put(v2, v1, 5), TIME);
        events.pipeInput(null, RawEvents.delete(v2, 9, 8), TIME);

        assertThat(created)
                .contains(
                        "wf.k8s.pods",
                        "wf.k8s-latest.pods",
                        "wf.k8s.deployments.apps",
                        "wf.k8s-latest.deployments.apps",
                        "wf.k8s-errors")
                .doesNotContain("wf.k8s.events", "wf.k8s.events.events.k8s.io");

        TestOutputTopic<String, KubeWatchEvent> changes = driver.createOutputTopic(
                KubeTopicNames.changes(PREFIX, "pods"),
                Serdes.String().deserializer(),
                KubeSerdes.watchEvent().deserializer());
        List<TestRecord<String, KubeWatchEvent>> records = changes.readRecordsToList();
        assertThat(records).extracting(TestRecord::key).containsOnly("team-a/web-0");
        assertThat(records)
                .extracting(r -> r.value().type())
                .containsExactly(KubeWatchEvent.Type.ADDED, KubeWatchEvent.Type.MODIFIED, KubeWatchEvent.Type.DELETED);
        assertThat(records).extracting(r -> r.value().resourceVersion()).containsExactly(5L, 8L, 9L);
        assertThat(records).extracting(r -> r.value().previousResourceVersion()).containsExactly(0L, 5L, 8L);
        assertThat(header(records.get(1), CloudEventHeaders.SOURCE)).isEqualTo("//test");
        assertThat(header(records.get(1), CloudEventHeaders.ID)).isEqualTo("8-0");
        assertThat(header(records.get(1), CloudEventHeaders.TIME)).isEqualTo("2025-01-02T03:04:05Z");

        TestOutputTopic<String, JsonObject> latest = driver.createOutputTopic(
                KubeTopicNames.latest(PREFIX, "pods"),
                Serdes.String().deserializer(),
                KubeSerdes.object().deserializer());
        List<TestRecord<String, JsonObject>> objects = latest.readRecordsToList();
        assertThat(objects).hasSize(3);
        assertThat(objects.get(1)
                        .value()
                        .getAsJsonObject("metadata")
                        .get("resourceVersion")
                        .getAsString())
                .isEqualTo("8");
        assertThat(objects.get(2).value()).as("a tombstone after the deletion").isNull();
        assertThat(header(objects.get(2), CloudEventHeaders.REVISION)).isEqualTo("9");
        assertThat(metrics.events()).isEqualTo(3);
        assertThat(metrics.skippedRecords()).isEqualTo(1);
        assertThat(metrics.revision()).isEqualTo(9);
    }

    @Test
    void undecodableValuesGoToTheErrorsTopicAndTheRestGoesOn() {
        events.pipeInput(
                null, RawEvents.put(kv(POD_KEY, "garbage".getBytes(StandardCharsets.UTF_8), 3, 3, 1), null, 2));
        driver.createInputTopic(
                        WatchFanoutSerdes.eventsTopic(PREFIX),
                        Serdes.ByteArray().serializer(),
                        Serdes.ByteArray().serializer())
                .pipeInput(new byte[] {(byte) 0xff, 0x01});
        events.pipeInput(null, RawEvents.put(kv(POD_KEY, RawEvents.pod("team-a", "web-0", ""), 4, 4, 1), null, 3));

        List<TestRecord<String, String>> errors = driver.createOutputTopic(
                        KubeTopicNames.errors(PREFIX),
                        Serdes.String().deserializer(),
                        Serdes.String().deserializer())
                .readRecordsToList();
        assertThat(errors).hasSize(2);
        JsonObject first = JsonParser.parseString(errors.get(0).value()).getAsJsonObject();
        assertThat(errors.get(0).key()).isEqualTo(POD_KEY);
        assertThat(first.get("key").getAsString()).isEqualTo(POD_KEY);
        assertThat(first.get("revision").getAsLong()).isEqualTo(3);
        assertThat(first.get("reason").getAsString()).isEqualTo("CORRUPT");
        assertThat(JsonParser.parseString(errors.get(1).value())
                        .getAsJsonObject()
                        .get("message")
                        .getAsString())
                .startsWith("not an events record");
        assertThat(driver.createOutputTopic(
                                KubeTopicNames.changes(PREFIX, "pods"),
                                Serdes.String().deserializer(),
                                KubeSerdes.watchEvent().deserializer())
                        .readValuesToList())
                .extracting(KubeWatchEvent::resourceVersion)
                .containsExactly(4L);
        assertThat(metrics.undecodable(DecodeResult.Reason.CORRUPT)).isEqualTo(2);
    }

    @Test
    void secretsAreRedactedAndCustomResourcesGetTopicsFromTheirDefinitionOn() {
        String secretKey = "/registry/secrets/team-a/db";
        events.pipeInput(
                null,
                RawEvents.put(
                        kv(secretKey, RawEvents.secret("team-a", "db", "password", "hunter2"), 3, 3, 1), null, 2));
        KubeWatchEvent secret = driver.createOutputTopic(
                        KubeTopicNames.changes(PREFIX, "secrets"),
                        Serdes.String().deserializer(),
                        KubeSerdes.watchEvent().deserializer())
                .readValue();
        assertThat(new String(secret.object(), StandardCharsets.UTF_8))
                .doesNotContain("hunter2")
                .doesNotContain(
                        java.util.Base64.getEncoder().encodeToString("hunter2".getBytes(StandardCharsets.UTF_8)))
                .contains(SecretRedaction.ANNOTATION);

        events.pipeInput(null, RawEvents.put(kv(RawEvents.CRD_KEY, RawEvents.widgetDefinition(), 10, 10, 1), null, 9));
        assertThat(created).contains("wf.k8s.widgets.example.com", "wf.k8s-latest.widgets.example.com");
        events.pipeInput(
                null,
                RawEvents.put(
                        kv("/registry/example.com/widgets/team-a/w-1", RawEvents.widget("team-a", "w-1", 3), 11, 11, 1),
                        null,
                        10));
        List<KubeWatchEvent> widgets = driver.createOutputTopic(
                        KubeTopicNames.changes(PREFIX, "widgets.example.com"),
                        Serdes.String().deserializer(),
                        KubeSerdes.watchEvent().deserializer())
                .readValuesToList();
        assertThat(widgets).extracting(KubeWatchEvent::key).containsExactly("team-a/w-1");
    }

    private static String header(TestRecord<?, ?> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }
}
