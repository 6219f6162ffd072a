package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Descriptors.Descriptor;
import io.watchfanout.fanout.frame.JsonBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every fixture of kube-apiserver's serializer, stored as protobuf, written as JSON: the JSON
 * equals the serializer's own JSON of the same object, with the resourceVersion set from the
 * revision; a field the schema does not know is missing from the JSON only when the writer
 * counted unknown fields. A {@code false} or {@code 0} that kube-apiserver leaves out may be
 * written: protobuf does not tell a Go pointer (whose zero value kube-apiserver writes) from a
 * plain field with {@code omitempty}, and writing the zero is the reading that loses nothing.
 */
class ProtoJsonWriterTest {
    private static final long REVISION = 12345;
    private final ProtoJsonWriter writer = ProtoJsonWriter.create();

    static List<String> fixtures() {
        return KubeFixtures.names();
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    @RequiresKubeFixtures
    void storedProtobufRendersAsKubeApiserversJson(String name) throws Exception {
        byte[] stored = KubeFixtures.protobuf(name);
        StoredObject object = StoredObject.of(stored, 0, stored.length);
        assertThat(object.encoding()).isEqualTo(StoredObject.StorageEncoding.PROTOBUF);
        Descriptor type = KubeSchema.standard()
                .type(object.apiVersion(), object.kind())
                .orElseThrow(() -> new AssertionError("no schema for " + object.apiVersion() + " " + object.kind()));

        JsonBuffer out = new JsonBuffer(256);
        int unknown = writer.writeObject(
                out,
                type,
                object.apiVersion(),
                object.kind(),
                stored,
                object.rawOffset(),
                object.rawLength(),
                REVISION);
        JsonElement ours = JsonParser.parseString(new String(out.array(), 0, out.length(), StandardCharsets.UTF_8));
        JsonObject expected = JsonParser.parseString(KubeFixtures.json(name)).getAsJsonObject();
        expected.getAsJsonObject("metadata").addProperty("resourceVersion", Long.toString(REVISION));

        List<String> wrong = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        compare("", ours, expected, wrong, missing);
        assertThat(wrong).as("fields whose JSON differs from kube-apiserver's").isEmpty();
        if (unknown == 0) {
            assertThat(missing).as("fields missing from the JSON").isEmpty();
        } else {
            assertThat(missing).as("%d fields unknown to the schema", unknown).isNotEmpty();
        }
    }

    @Test
    void emptyScalarsWithoutOmitemptyAreWrittenAsKubeApiserverWritesThem() throws Exception {
        // imageID "" on the wire, as Go marshals it; containerID "" (omitempty) too; restartCount
        // and ready absent from the bytes (not written by Go): Go's JSON has all four but containerID.
        byte[] stored = StoredObjects.protobuf(
                "v1",
                "Pod",
                "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"generateName\":\"\"},"
                        + "\"status\":{\"containerStatuses\":[{\"name\":\"main\",\"image\":\"nginx\","
                        + "\"imageID\":\"\",\"containerID\":\"\"}]}}");
        StoredObject object = StoredObject.of(stored, 0, stored.length);
        Descriptor type = KubeSchema.standard().type("v1", "Pod").orElseThrow();
        JsonBuffer out = new JsonBuffer(256);
        writer.writeObject(out, type, "v1", "Pod", stored, object.rawOffset(), object.rawLength(), 7);
        JsonObject pod = JsonParser.parseString(new String(out.array(), 0, out.length(), StandardCharsets.UTF_8))
                .getAsJsonObject();
        assertThat(pod.getAsJsonObject("metadata").has("generateName")).isFalse();
        JsonObject status = pod.getAsJsonObject("status")
                .getAsJsonArray("containerStatuses")
                .get(0)
                .getAsJsonObject();
        assertThat(status.toString())
                .isEqualTo(
                        "{\"name\":\"main\",\"image\":\"nginx\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0}");
    }

    static void compare(String path, JsonElement ours, JsonElement expected, List<String> wrong, List<String> missing) {
        if (ours.isJsonObject() && expected.isJsonObject()) {
            JsonObject o = ours.getAsJsonObject();
            JsonObject e = expected.getAsJsonObject();
            for (Map.Entry<String, JsonElement> field : o.entrySet()) {
                if (!e.has(field.getKey()) && isZero(field.getValue())) {
                    continue;
                } else if (!e.has(field.getKey())) {
                    wrong.add(
                            path + "/" + field.getKey() + " (not in kube-apiserver's JSON: " + field.getValue() + ")");
                } else {
                    compare(path + "/" + field.getKey(), field.getValue(), e.get(field.getKey()), wrong, missing);
                }
            }
            for (String key : e.keySet()) {
                if (!o.has(key)) {
                    missing.add(path + "/" + key);
                }
            }
        } else if (ours.isJsonArray()
                && expected.isJsonArray()
                && ours.getAsJsonArray().size() == expected.getAsJsonArray().size()) {
            for (int i = 0; i < ours.getAsJsonArray().size(); i++) {
                compare(
                        path + "[" + i + "]",
                        ours.getAsJsonArray().get(i),
                        expected.getAsJsonArray().get(i),
                        wrong,
                        missing);
            }
        } else if (!ours.equals(expected)) {
            wrong.add(path + ": " + ours + " != " + expected);
        }
    }

    private static boolean isZero(JsonElement value) {
        return value.isJsonPrimitive()
                && ((value.getAsJsonPrimitive().isBoolean() && !value.getAsBoolean())
                        || (value.getAsJsonPrimitive().isNumber() && value.getAsDouble() == 0));
    }
}
