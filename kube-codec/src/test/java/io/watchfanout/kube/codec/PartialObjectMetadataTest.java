package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import io.watchfanout.common.JsonBuffer;
import io.watchfanout.schema.v1.KeyValue;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The metadata-only forms as client-go's metadata client decodes them: the protobuf decoded with
 * client-java-proto's {@code meta.v1.PartialObjectMetadata(List)} messages, the JSON as
 * kube-apiserver writes it, for protobuf-stored objects and JSON-stored custom resources.
 */
class PartialObjectMetadataTest {
    private static final byte[] WIDGET = ("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                    + "\"metadata\":{\"name\":\"w\",\"namespace\":\"b\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"size\":3}}")
            .getBytes(StandardCharsets.UTF_8);

    @Test
    void theJsonOfAProtobufObjectIsItsObjectMetaAlone() throws Exception {
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        JsonBuffer out = new JsonBuffer(64);
        assertThat(PartialObjectMetadata.writeJson(out, pod, 0, pod.length, 42)).isZero();
        JsonObject object = parse(Arrays.copyOf(out.array(), out.length()));
        assertThat(object.keySet()).containsExactly("kind", "apiVersion", "metadata");
        assertThat(object.get("kind").getAsString()).isEqualTo("PartialObjectMetadata");
        assertThat(object.get("apiVersion").getAsString()).isEqualTo("meta.k8s.io/v1");
        JsonObject meta = object.getAsJsonObject("metadata");
        assertThat(meta.get("name").getAsString()).isEqualTo("web-0");
        assertThat(meta.get("namespace").getAsString()).isEqualTo("shop");
        assertThat(meta.get("uid").getAsString()).isEqualTo("uid-web-0");
        assertThat(meta.get("resourceVersion").getAsString()).isEqualTo("42");
        assertThat(meta.get("creationTimestamp").getAsString()).isEqualTo("2023-11-14T22:13:20Z");
        assertThat(meta.getAsJsonObject("labels").get("app").getAsString()).isEqualTo("web");
    }

    @Test
    void theJsonOfACustomResourceIsItsMetadataAlone() throws Exception {
        JsonBuffer out = new JsonBuffer(64);
        PartialObjectMetadata.writeJson(out, WIDGET, 0, WIDGET.length, 7);
        JsonObject object = parse(Arrays.copyOf(out.array(), out.length()));
        assertThat(object.keySet()).containsExactly("kind", "apiVersion", "metadata");
        assertThat(object.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("7");
        assertThat(object.getAsJsonObject("metadata").get("name").getAsString()).isEqualTo("w");
    }

    @Test
    void theProtobufEnvelopeHoldsThePartialObjectMetadataMessage() throws Exception {
        Meta.ObjectMeta stored = StoredObjects.podMessage("shop", "web-0", "node-1", "Running", "web")
                .getMetadata();
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        byte[] envelope = PartialObjectMetadata.protobufEnvelope(pod, 0, pod.length, 42);
        assertThat(Arrays.copyOf(envelope, 4)).isEqualTo(new byte[] {'k', '8', 's', 0});
        Runtime.Unknown unknown = Runtime.Unknown.parseFrom(Arrays.copyOfRange(envelope, 4, envelope.length));
        assertThat(unknown.getTypeMeta().getApiVersion()).isEqualTo("meta.k8s.io/v1");
        assertThat(unknown.getTypeMeta().getKind()).isEqualTo("PartialObjectMetadata");
        Meta.PartialObjectMetadata partial = Meta.PartialObjectMetadata.parseFrom(unknown.getRaw());
        assertThat(partial.getMetadata())
                .isEqualTo(stored.toBuilder().setResourceVersion("42").build());
    }

    @Test
    void protobufWatchEventsCarryTheEnvelope() throws Exception {
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        byte[] frame = KubeWatchFrames.metadataProtobuf(KubeWatchFrames.EventType.MODIFIED, pod, 0, pod.length, 9);
        assertThat(ByteBuffer.wrap(frame).getInt()).isEqualTo(frame.length - 4);
        Meta.WatchEvent event = Meta.WatchEvent.parseFrom(Arrays.copyOfRange(frame, 4, frame.length));
        assertThat(event.getType()).isEqualTo("MODIFIED");
        byte[] raw = event.getObject().getRaw().toByteArray();
        Runtime.Unknown unknown = Runtime.Unknown.parseFrom(Arrays.copyOfRange(raw, 4, raw.length));
        assertThat(unknown.getTypeMeta().getKind()).isEqualTo("PartialObjectMetadata");
        assertThat(Meta.PartialObjectMetadata.parseFrom(unknown.getRaw())
                        .getMetadata()
                        .getResourceVersion())
                .isEqualTo("9");

        KubeWatchFrames.Frame json =
                KubeWatchFrames.metadataJson(KubeWatchFrames.EventType.ADDED, WIDGET, 0, WIDGET.length, 3);
        JsonObject line = parse(json.bytes());
        assertThat(line.get("type").getAsString()).isEqualTo("ADDED");
        assertThat(line.getAsJsonObject("object").get("kind").getAsString()).isEqualTo("PartialObjectMetadata");
    }

    @Test
    void listsInBothFormsRenderedOrMemoized() throws Exception {
        KubeListWriter writer = new KubeListWriter(KubeSchema.standard(), ProtoJsonWriter.create());
        byte[] a = StoredObjects.pod("shop", "a", "node-1", "Running", "web");
        byte[] b = StoredObjects.pod("shop", "b", "node-2", "Running", "web");
        KeyValue kvB = KeyValue.newBuilder()
                .setValue(com.google.protobuf.ByteString.copyFrom(b))
                .setModRevision(6)
                .build();
        // b memoized, as the node keeps items on the event that wrote them.
        KubeListWriter.Memo memo = form -> KubeListWriter.renderItem(kvB, form);
        List<KubeListWriter.Item> items = List.of(new KubeListWriter.Item(a, 5), KubeListWriter.Item.of(kvB, memo));

        ByteArrayOutputStream json = new ByteArrayOutputStream();
        writer.metadataJson(items, 8, "next", 3, json::write);
        JsonObject list = parse(json.toByteArray());
        assertThat(list.get("kind").getAsString()).isEqualTo("PartialObjectMetadataList");
        assertThat(list.get("apiVersion").getAsString()).isEqualTo("meta.k8s.io/v1");
        assertThat(list.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("8");
        assertThat(list.getAsJsonObject("metadata").get("continue").getAsString())
                .isEqualTo("next");
        assertThat(list.getAsJsonArray("items")).hasSize(2);
        JsonObject second = list.getAsJsonArray("items").get(1).getAsJsonObject();
        assertThat(second.keySet()).containsExactly("kind", "apiVersion", "metadata");
        assertThat(second.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("6");

        ByteArrayOutputStream protobuf = new ByteArrayOutputStream();
        writer.metadataProtobuf(items, 8, null, -1, protobuf::write);
        byte[] bytes = protobuf.toByteArray();
        Runtime.Unknown unknown = Runtime.Unknown.parseFrom(Arrays.copyOfRange(bytes, 4, bytes.length));
        assertThat(unknown.getTypeMeta().getKind()).isEqualTo("PartialObjectMetadataList");
        assertThat(unknown.getTypeMeta().getApiVersion()).isEqualTo("meta.k8s.io/v1");
        Meta.PartialObjectMetadataList decoded = Meta.PartialObjectMetadataList.parseFrom(unknown.getRaw());
        assertThat(decoded.getMetadata().getResourceVersion()).isEqualTo("8");
        assertThat(decoded.getItemsList())
                .extracting(
                        i -> i.getMetadata().getName() + "@" + i.getMetadata().getResourceVersion())
                .containsExactly("a@5", "b@6");
    }

    private static JsonObject parse(byte[] json) {
        return JsonParser.parseString(new String(json, StandardCharsets.UTF_8)).getAsJsonObject();
    }
}
