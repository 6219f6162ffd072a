package io.watchfanout.localstack.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KubeObjectsTest {
    private static Struct parse(String json) throws Exception {
        Struct.Builder b = Struct.newBuilder();
        JsonFormat.parser().merge(json, b);
        return b.build();
    }

    private static int size(String json) {
        return json.getBytes(StandardCharsets.UTF_8).length;
    }

    @Test
    void documentsAreValidJsonOfKubernetesShapeAndSize() throws Exception {
        KubeObjects.Pod pod = new KubeObjects.Pod("team-a", "web", "7d4b9c8f6d", "web-7d4b9c8f6d-x2k9p", "node-3", 7);
        String pending = KubeObjects.pod(pod);
        pod.started = KubeObjects.now();
        pod.phase = "Running";
        pod.ready = true;
        pod.restarts = 1;
        String running = KubeObjects.pod(pod);
        for (String doc : new String[] {pending, running}) {
            Struct s = parse(doc);
            assertThat(s.getFieldsOrThrow("kind").getStringValue()).isEqualTo("Pod");
            assertThat(s.getFieldsOrThrow("metadata")
                            .getStructValue()
                            .getFieldsOrThrow("namespace")
                            .getStringValue())
                    .isEqualTo("team-a");
        }
        assertThat(size(running)).isBetween(3000, 8000);
        assertThat(parse(running)
                        .getFieldsOrThrow("status")
                        .getStructValue()
                        .getFieldsOrThrow("phase")
                        .getStringValue())
                .isEqualTo("Running");

        String cm = KubeObjects.configMap("default", "settings-abcde", 3, new Random(1));
        assertThat(parse(cm).getFieldsOrThrow("data").getStructValue().getFieldsCount())
                .isEqualTo(3);
        assertThat(size(cm)).isBetween(700, 8000);
        assertThat(parse(KubeObjects.deployment("team-a", "web", "7d4b9c8f6d", 2, 4))
                        .getFieldsOrThrow("spec")
                        .getStructValue()
                        .getFieldsOrThrow("replicas")
                        .getNumberValue())
                .isEqualTo(4);
        assertThat(parse(KubeObjects.replicaSet("team-a", "web", "7d4b9c8f6d", 2, 0))
                        .getFieldsOrThrow("kind")
                        .getStringValue())
                .isEqualTo("ReplicaSet");
        assertThat(parse(KubeObjects.nodeLease("node-1", Instant.parse("2026-01-02T03:04:05Z")))
                        .getFieldsOrThrow("spec")
                        .getStructValue()
                        .getFieldsOrThrow("renewTime")
                        .getStringValue())
                .isEqualTo("2026-01-02T03:04:05.000000Z");
        assertThat(parse(KubeObjects.event("team-a", "web-x.1", pod, "Pulled", "ok", "Normal"))
                        .getFieldsOrThrow("reason")
                        .getStringValue())
                .isEqualTo("Pulled");
    }

    @Test
    void stringsAreEscaped() throws Exception {
        String tricky = "quote \" backslash \\ newline \n tab \t bell \u0007 unicode \u00e9";
        String json = new Json()
                .beginObject()
                .field("s", tricky)
                .name("a")
                .beginArray()
                .value(1)
                .value(true)
                .raw("null")
                .endArray()
                .endObject()
                .toString();
        Struct s = parse(json);
        assertThat(s.getFieldsOrThrow("s").getStringValue()).isEqualTo(tricky);
        assertThat(s.getFieldsOrThrow("a").getListValue().getValuesList())
                .extracting(Value::getKindCase)
                .containsExactly(Value.KindCase.NUMBER_VALUE, Value.KindCase.BOOL_VALUE, Value.KindCase.NULL_VALUE);
    }
}
