package io.watchfanout.kube.kafka;

import static io.watchfanout.kube.kafka.RawEvents.kv;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.watchfanout.kube.kafka.DecodeResult.Decoded;
import io.watchfanout.kube.kafka.DecodeResult.Reason;
import io.watchfanout.kube.kafka.DecodeResult.SkipReason;
import io.watchfanout.kube.kafka.DecodeResult.Skipped;
import io.watchfanout.kube.kafka.DecodeResult.Undecodable;
import io.watchfanout.kube.kafka.KubeEventDecoder.SecretPolicy;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.Resync;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class KubeEventDecoderTest {
    private static final Instant TIME = Instant.parse("2025-01-02T03:04:05Z");
    private static final String POD_KEY = "/registry/pods/team-a/web-0";

    private final KubeEventDecoder decoder = new KubeEventDecoder("/registry", SecretPolicy.REDACT);

    private KubeWatchEvent decoded(EventsRecord record) {
        DecodeResult result = decoder.decode(record, TIME);
        assertThat(result).isInstanceOf(Decoded.class);
        return ((Decoded) result).event();
    }

    @Test
    void podAddedModifiedDeletedCarryTheirResourceVersions() {
        KeyValue v1 = kv(POD_KEY, RawEvents.pod("team-a", "web-0", ""), 5, 5, 1);
        KeyValue v2 = kv(POD_KEY, RawEvents.pod("team-a", "web-0", "node-1"), 5, 8, 2);

        KubeWatchEvent added = decoded(RawEvents.put(v1, null, 4));
        assertThat(added.type()).isEqualTo(KubeWatchEvent.Type.ADDED);
        assertThat(added.group()).isEmpty();
        assertThat(added.version()).isEqualTo("v1");
        assertThat(added.kind()).isEqualTo("Pod");
        assertThat(added.resource()).isEqualTo("pods");
        assertThat(added.key()).isEqualTo("team-a/web-0");
        assertThat(added.resourceVersion()).isEqualTo(5);
        assertThat(added.previousResourceVersion()).isZero();
        assertThat(added.time()).isEqualTo(TIME);
        JsonObject object = added.objectTree();
        assertThat(object.get("kind").getAsString()).isEqualTo("Pod");
        assertThat(object.get("apiVersion").getAsString()).isEqualTo("v1");
        assertThat(object.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("5");

        KubeWatchEvent modified = decoded(RawEvents.put(v2, v1, 5));
        assertThat(modified.type()).isEqualTo(KubeWatchEvent.Type.MODIFIED);
        assertThat(modified.resourceVersion()).isEqualTo(8);
        assertThat(modified.previousResourceVersion()).isEqualTo(5);
        assertThat(modified.objectTree().getAsJsonObject("spec").get("nodeName").getAsString())
                .isEqualTo("node-1");

        KubeWatchEvent deleted = decoded(RawEvents.delete(v2, 10, 8));
        assertThat(deleted.type()).isEqualTo(KubeWatchEvent.Type.DELETED);
        assertThat(deleted.resourceVersion()).as("the deletion's revision").isEqualTo(10);
        assertThat(deleted.previousResourceVersion()).isEqualTo(8);
        JsonObject last = deleted.objectTree();
        assertThat(last.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("10");
        assertThat(last.getAsJsonObject("spec").get("nodeName").getAsString()).isEqualTo("node-1");
    }

    @Test
    void customResourcesAreServedOnceTheirDefinitionPassed() {
        String key = "/registry/example.com/widgets/team-a/w1";
        KeyValue widget = kv(key, RawEvents.widget("team-a", "w1", 3), 12, 12, 1);
        assertThat(decoder.decode(RawEvents.put(widget, null, 11), TIME))
                .as("before its CRD, a custom resource's key is no resource")
                .isEqualTo(new Skipped(SkipReason.NOT_KUBERNETES));

        KubeWatchEvent definition =
                decoded(RawEvents.put(kv(RawEvents.CRD_KEY, RawEvents.widgetDefinition(), 11, 11, 1), null, 10));
        assertThat(definition.kind()).isEqualTo("CustomResourceDefinition");
        assertThat(definition.key()).isEqualTo("widgets.example.com");

        KubeWatchEvent added = decoded(RawEvents.put(widget, null, 11));
        assertThat(added.group()).isEqualTo("example.com");
        assertThat(added.kind()).isEqualTo("Widget");
        assertThat(added.qualifiedResource()).isEqualTo("widgets.example.com");
        assertThat(added.key()).isEqualTo("team-a/w1");
        JsonObject object = added.objectTree();
        assertThat(object.getAsJsonObject("spec").get("size").getAsInt()).isEqualTo(3);
        assertThat(object.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("12");
        assertThat(decoder.resources().byPlural("example.com", "v1", "widgets")).isPresent();

        decoded(RawEvents.delete(kv(RawEvents.CRD_KEY, RawEvents.widgetDefinition(), 11, 11, 1), 13, 12));
        assertThat(decoder.resources().byPlural("example.com", "v1", "widgets")).isEmpty();
    }

    @Test
    void undecodableValuesSayWhy() {
        assertThat(decoder.decode(
                        RawEvents.put(kv(POD_KEY, "not an object".getBytes(StandardCharsets.UTF_8), 3, 3, 1), null, 2),
                        TIME))
                .isEqualTo(new Undecodable(
                        POD_KEY,
                        3,
                        Reason.CORRUPT,
                        "neither a protobuf envelope (k8s\\0), JSON, CBOR nor an encrypted value"));
        DecodeResult cbor = decoder.decode(
                RawEvents.put(kv(POD_KEY, new byte[] {(byte) 0xd9, (byte) 0xd9, (byte) 0xf7, 0x01}, 3, 3, 1), null, 2),
                TIME);
        assertThat(cbor)
                .isInstanceOfSatisfying(
                        Undecodable.class, u -> assertThat(u.reason()).isEqualTo(Reason.CBOR));
        DecodeResult encrypted = decoder.decode(
                RawEvents.put(
                        kv(POD_KEY, "k8s:enc:aescbc:v1:key1:xxxxxxxx".getBytes(StandardCharsets.US_ASCII), 3, 3, 1),
                        null,
                        2),
                TIME);
        assertThat(encrypted).isInstanceOfSatisfying(Undecodable.class, u -> {
            assertThat(u.reason()).isEqualTo(Reason.ENCRYPTED);
            assertThat(u.message()).contains("k8s:enc:aescbc:v1:key1");
        });
        byte[] truncated = RawEvents.pod("team-a", "web-0", "node-1");
        truncated = java.util.Arrays.copyOf(truncated, truncated.length - 3);
        assertThat(decoder.decode(RawEvents.put(kv(POD_KEY, truncated, 3, 3, 1), null, 2), TIME))
                .isInstanceOfSatisfying(
                        Undecodable.class, u -> assertThat(u.reason()).isEqualTo(Reason.CORRUPT));
    }

    @Test
    void secretValuesAreRedactedUnlessPublishingIsAskedFor() {
        String key = "/registry/secrets/team-a/db";
        EventsRecord record =
                RawEvents.put(kv(key, RawEvents.secret("team-a", "db", "password", "hunter2"), 7, 7, 1), null, 6);

        JsonObject redacted = decoded(record).objectTree();
        assertThat(redacted.getAsJsonObject("data").get("password").getAsString())
                .isEmpty();
        assertThat(redacted.getAsJsonObject("metadata")
                        .getAsJsonObject("annotations")
                        .get(SecretRedaction.ANNOTATION)
                        .getAsString())
                .isEqualTo("data");
        assertThat(new String(decoded(record).object(), StandardCharsets.UTF_8))
                .doesNotContain(Base64.getEncoder().encodeToString("hunter2".getBytes(StandardCharsets.UTF_8)));

        DecodeResult published = new KubeEventDecoder("/registry", SecretPolicy.PUBLISH).decode(record, TIME);
        assertThat(((Decoded) published)
                        .event()
                        .objectTree()
                        .getAsJsonObject("data")
                        .get("password")
                        .getAsString())
                .isEqualTo(Base64.getEncoder().encodeToString("hunter2".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void recordsWithoutKubernetesObjectsAreSkipped() {
        assertThat(decoder.decode(
                        RawEvents.put(kv("/other/app/config", "x".getBytes(StandardCharsets.UTF_8), 2, 2, 1), null, 1),
                        TIME))
                .isEqualTo(new Skipped(SkipReason.NOT_KUBERNETES));
        assertThat(decoder.decode(
                        RawEvents.put(
                                kv("/registry/masterleases/10.0.0.1", "x".getBytes(StandardCharsets.UTF_8), 2, 2, 1),
                                null,
                                1),
                        TIME))
                .isEqualTo(new Skipped(SkipReason.NOT_KUBERNETES));
        assertThat(decoder.decode(
                        EventsRecord.newBuilder()
                                .setProgress(
                                        Progress.newBuilder().setRevision(9).setPrevRevision(9))
                                .build(),
                        TIME))
                .isEqualTo(new Skipped(SkipReason.PROGRESS));
        assertThat(decoder.decode(
                        EventsRecord.newBuilder()
                                .setResync(Resync.newBuilder().setRevision(9).setEntryCount(0))
                                .build(),
                        TIME))
                .isEqualTo(new Skipped(SkipReason.RESYNC));
    }
}
