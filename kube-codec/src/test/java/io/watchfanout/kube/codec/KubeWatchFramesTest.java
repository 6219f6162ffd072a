package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Watch frames as client-go and the JSON clients read them. */
class KubeWatchFramesTest {
    private static final String META = "k8s.io.apimachinery.pkg.apis.meta.v1.";
    private final KubeWatchFrames frames = new KubeWatchFrames(KubeSchema.standard());
    private final KubeResource pods =
            KubeResources.builtIn("/registry").byPlural("", "v1", "pods").orElseThrow();

    @Test
    void protobufEventIsALengthPrefixedBareWatchEventAroundTheFullEnvelope() throws Exception {
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        byte[] frame = frames.protobuf(KubeWatchFrames.EventType.DELETED, pod, 0, pod.length, 77);

        DynamicMessage event = watchEvent(frame);
        assertThat(event.getField(event.getDescriptorForType().findFieldByName("type")))
                .isEqualTo("DELETED");
        byte[] raw = raw(event);
        assertThat(StoredObject.of(raw, 0, raw.length).kind()).isEqualTo("Pod");
        assertThat(StoredObjects.resourceVersion(StoredObjects.decode(raw))).isEqualTo("77");
    }

    @Test
    void jsonEventIsOneLineWithTheObjectAtTheEventsRevision() throws Exception {
        byte[] cm = StoredObjects.configMap("shop", "settings", "mode", "fast");
        KubeWatchFrames.Frame frame = frames.json(KubeWatchFrames.EventType.ADDED, cm, 0, cm.length, 9);
        String line = new String(frame.bytes(), StandardCharsets.UTF_8);
        assertThat(line).endsWith("\n").doesNotContain("\n\n");
        assertThat(line.indexOf('\n')).isEqualTo(line.length() - 1);
        JsonObject event = JsonParser.parseString(line).getAsJsonObject();
        assertThat(event.get("type").getAsString()).isEqualTo("ADDED");
        JsonObject object = event.getAsJsonObject("object");
        assertThat(object.get("kind").getAsString()).isEqualTo("ConfigMap");
        assertThat(object.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("9");
        assertThat(frame.unknownFields()).isZero();
    }

    @Test
    void aJsonStoredCustomResourceGetsItsResourceVersion() throws Exception {
        byte[] widget =
                "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"},\"spec\":{\"size\":3}}"
                        .getBytes(StandardCharsets.UTF_8);
        KubeWatchFrames.Frame frame = frames.json(KubeWatchFrames.EventType.MODIFIED, widget, 0, widget.length, 12);
        JsonObject object = JsonParser.parseString(new String(frame.bytes(), StandardCharsets.UTF_8))
                .getAsJsonObject()
                .getAsJsonObject("object");
        assertThat(object.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("12");
        assertThat(object.getAsJsonObject("spec").get("size").getAsInt()).isEqualTo(3);
        assertThatThrownBy(() -> frames.protobuf(KubeWatchFrames.EventType.MODIFIED, widget, 0, widget.length, 12))
                .isInstanceOf(UndecodableObjectException.class)
                .hasMessageContaining("JSON");
    }

    @Test
    void anEncryptedOrCorruptValueIsAnErrorNamingWhy() {
        byte[] encrypted = "k8s:enc:aesgcm:v1:key2:xxxxxxxx".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> frames.json(KubeWatchFrames.EventType.ADDED, encrypted, 0, encrypted.length, 1))
                .isInstanceOf(UndecodableObjectException.class)
                .hasMessageContaining("k8s:enc:aesgcm:v1:key2");
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        byte[] cut = Arrays.copyOf(pod, pod.length / 2);
        assertThatThrownBy(() -> frames.json(KubeWatchFrames.EventType.ADDED, cut, 0, cut.length, 1))
                .isInstanceOf(UndecodableObjectException.class);
    }

    @Test
    void bookmarksCarryOnlyTheResourceVersionAndTheInitialEventsEndAnnotation() throws Exception {
        JsonObject json = JsonParser.parseString(
                        new String(KubeWatchFrames.jsonBookmark(pods, 55, true), StandardCharsets.UTF_8))
                .getAsJsonObject();
        assertThat(json.get("type").getAsString()).isEqualTo("BOOKMARK");
        JsonObject meta = json.getAsJsonObject("object").getAsJsonObject("metadata");
        assertThat(meta.get("resourceVersion").getAsString()).isEqualTo("55");
        assertThat(meta.getAsJsonObject("annotations")
                        .get(KubeWatchFrames.INITIAL_EVENTS_END)
                        .getAsString())
                .isEqualTo("true");

        DynamicMessage event = watchEvent(KubeWatchFrames.protobufBookmark(pods, 55, false));
        byte[] raw = raw(event);
        StoredObject object = StoredObject.of(raw, 0, raw.length);
        assertThat(object.apiVersion()).isEqualTo("v1");
        assertThat(object.kind()).isEqualTo("Pod");
        assertThat(StoredObjects.resourceVersion(StoredObjects.decode(raw))).isEqualTo("55");
    }

    @Test
    void errorsCarryAStatusInBothForms() throws Exception {
        String message = "too old resource version: 5 (90)";
        JsonObject status = JsonParser.parseString(
                        new String(KubeWatchFrames.jsonError(410, "Expired", message), StandardCharsets.UTF_8))
                .getAsJsonObject()
                .getAsJsonObject("object");
        assertThat(status.get("kind").getAsString()).isEqualTo("Status");
        assertThat(status.get("code").getAsInt()).isEqualTo(410);
        assertThat(status.get("reason").getAsString()).isEqualTo("Expired");
        assertThat(status.get("message").getAsString()).isEqualTo(message);

        byte[] raw = raw(watchEvent(KubeWatchFrames.protobufError(410, "Expired", message)));
        StoredObject object = StoredObject.of(raw, 0, raw.length);
        Descriptor statusType = KubeSchema.standard().message(META + "Status").orElseThrow();
        DynamicMessage decoded = DynamicMessage.parseFrom(
                statusType, Arrays.copyOfRange(raw, object.rawOffset(), object.rawOffset() + object.rawLength()));
        assertThat(decoded.getField(statusType.findFieldByName("code"))).isEqualTo(410);
        assertThat(decoded.getField(statusType.findFieldByName("reason"))).isEqualTo("Expired");
    }

    private static DynamicMessage watchEvent(byte[] frame) throws Exception {
        int length = ByteBuffer.wrap(frame).getInt();
        assertThat(length).isEqualTo(frame.length - 4);
        Descriptor type = KubeSchema.standard().message(META + "WatchEvent").orElseThrow();
        return DynamicMessage.parseFrom(type, Arrays.copyOfRange(frame, 4, frame.length));
    }

    private static byte[] raw(DynamicMessage event) {
        DynamicMessage object =
                (DynamicMessage) event.getField(event.getDescriptorForType().findFieldByName("object"));
        byte[] raw = ((ByteString) object.getField(object.getDescriptorForType().findFieldByName("raw"))).toByteArray();
        assertThat(Arrays.copyOf(raw, 4)).isEqualTo(new byte[] {'k', '8', 's', 0});
        return raw;
    }
}
