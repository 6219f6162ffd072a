package io.watchfanout.kube.kafka;

import static io.watchfanout.kube.kafka.RawEvents.kv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import io.watchfanout.kube.kafka.KubeEventDecoder.SecretPolicy;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class KubeSerdesTest {
    private static final Instant TIME = Instant.parse("2025-01-02T03:04:05Z");
    private static final String KEY = "/registry/pods/team-a/web-0";

    private final KubeEventDecoder decoder = new KubeEventDecoder("/registry", SecretPolicy.REDACT);

    private KubeWatchEvent event(KeyValue kv, KeyValue prev) {
        return ((DecodeResult.Decoded) decoder.decode(RawEvents.put(kv, prev, 1), TIME)).event();
    }

    @Test
    void aWatchEventRoundTripsWithItsCloudEventHeaders() {
        KeyValue v1 = kv(KEY, RawEvents.pod("team-a", "web-0", ""), 5, 5, 1);
        KubeWatchEvent sent = event(kv(KEY, RawEvents.pod("team-a", "web-0", "node-1"), 5, 8, 2), v1);
        RecordHeaders headers = new RecordHeaders();
        byte[] value = new KubeWatchEventSerializer("//cluster-a").serialize("t", headers, sent);

        assertThat(new String(value, StandardCharsets.UTF_8)).startsWith("{\"type\":\"MODIFIED\",\"object\":{");
        assertThat(header(headers, CloudEventHeaders.SPEC_VERSION)).isEqualTo("1.0");
        assertThat(header(headers, CloudEventHeaders.ID)).isEqualTo("8-0");
        assertThat(header(headers, CloudEventHeaders.SOURCE)).isEqualTo("//cluster-a");
        assertThat(header(headers, CloudEventHeaders.TYPE)).isEqualTo("io.watchfanout.kube.modified");
        assertThat(header(headers, CloudEventHeaders.SUBJECT)).isEqualTo("/api/v1/namespaces/team-a/pods/web-0");
        assertThat(header(headers, CloudEventHeaders.TIME)).isEqualTo("2025-01-02T03:04:05Z");
        assertThat(header(headers, CloudEventHeaders.REVISION)).isEqualTo("8");
        assertThat(header(headers, CloudEventHeaders.PREVIOUS_RESOURCE_VERSION)).isEqualTo("5");

        KubeWatchEvent received = KubeSerdes.watchEvent().deserializer().deserialize("t", headers, value);
        assertThat(received.type()).isEqualTo(sent.type());
        assertThat(received.apiVersion()).isEqualTo("v1");
        assertThat(received.kind()).isEqualTo("Pod");
        assertThat(received.resource()).isEqualTo("pods");
        assertThat(received.key()).isEqualTo("team-a/web-0");
        assertThat(received.resourceVersion()).isEqualTo(8);
        assertThat(received.previousResourceVersion()).isEqualTo(5);
        assertThat(received.revision()).isEqualTo(8);
        assertThat(received.time()).isEqualTo(TIME);
        assertThat(received.objectTree()).isEqualTo(sent.objectTree());

        KubeWatchEvent bare = KubeSerdes.watchEvent().deserializer().deserialize("t", value);
        assertThat(bare.previousResourceVersion()).isEqualTo(KubeWatchEvent.UNKNOWN);
        assertThat(bare.resourceVersion()).isEqualTo(8);
    }

    @Test
    void objectsAndTombstonesDeserialize() {
        KubeWatchEvent added = event(kv(KEY, RawEvents.pod("team-a", "web-0", "node-1"), 5, 5, 1), null);
        JsonObject object = KubeSerdes.object().deserializer().deserialize("t", added.object());
        assertThat(object.getAsJsonObject("metadata").get("name").getAsString()).isEqualTo("web-0");
        assertThat(KubeSerdes.object().deserializer().deserialize("t", null)).isNull();
        assertThatThrownBy(() -> KubeSerdes.watchEvent()
                        .deserializer()
                        .deserialize("t", "{\"type\":\"BOOKMARK\",\"object\":{}}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("expected: ADDED, MODIFIED or DELETED");
    }

    @Test
    void continuityHoldsPerObjectAndCatchesGapsAndRepeats() {
        ObjectContinuity check = new ObjectContinuity();
        check.accept(at(KubeWatchEvent.Type.ADDED, "web-0", 5, 0, false));
        check.accept(at(KubeWatchEvent.Type.ADDED, "web-1", 6, 0, false));
        check.accept(at(KubeWatchEvent.Type.MODIFIED, "web-0", 8, 5, false));
        check.accept(at(KubeWatchEvent.Type.DELETED, "web-0", 10, 8, false));
        check.accept(at(KubeWatchEvent.Type.ADDED, "web-0", 12, 0, false));
        assertThat(check.last("pods", "team-a/web-0")).isEqualTo(12);

        assertThatThrownBy(() -> check.accept(at(KubeWatchEvent.Type.MODIFIED, "web-0", 15, 13, false)))
                .isInstanceOf(ObjectContinuityException.class)
                .hasMessageContaining("(a gap)");
        assertThatThrownBy(() -> check.accept(at(KubeWatchEvent.Type.MODIFIED, "web-1", 6, 0, false)))
                .isInstanceOf(ObjectContinuityException.class)
                .hasMessageContaining("(a repeat)");
        assertThat(check.last("pods", "team-a/web-0"))
                .as("unchanged by a refused event")
                .isEqualTo(12);

        check.accept(at(KubeWatchEvent.Type.MODIFIED, "web-0", 20, 17, true));
        assertThat(check.last("pods", "team-a/web-0"))
                .as("a resync entry restarts the chain")
                .isEqualTo(20);
    }

    private static KubeWatchEvent at(KubeWatchEvent.Type type, String name, long rv, long previous, boolean resync) {
        return new KubeWatchEvent(
                type, "", "v1", "Pod", "pods", "team-a", name, rv, previous, rv, 0, resync, TIME, new byte[] {'{', '}'
                });
    }

    private static String header(RecordHeaders headers, String name) {
        return new String(headers.lastHeader(name).value(), StandardCharsets.UTF_8);
    }
}
