package io.watchfanout.kube.codec.select;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Descriptors.Descriptor;
import io.kubernetes.client.proto.V1;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.ObjectFields;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.testkit.StorageEnvelope;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Label and field selectors as kube-apiserver parses and applies them, and the attributes they read. */
class SelectorsTest {
    private final KubeResources resources = KubeResources.builtIn("/registry");
    private final KubeResource pods = resources.byPlural("", "v1", "pods").orElseThrow();

    @Test
    void labelSelectorOperators() throws Exception {
        Map<String, String> labels = Map.of("app", "web", "tier", "front", "replicas", "3");
        assertThat(LabelSelector.parse("app=web").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("app==web,tier=front").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("app!=web").matches(labels)).isFalse();
        assertThat(LabelSelector.parse("missing!=x").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("app in (db, web)").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("app notin (db,web)").matches(labels)).isFalse();
        assertThat(LabelSelector.parse("missing notin (a)").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("tier").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("!tier").matches(labels)).isFalse();
        assertThat(LabelSelector.parse("!missing, app").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("replicas>2").matches(labels)).isTrue();
        assertThat(LabelSelector.parse("replicas<3").matches(labels)).isFalse();
        assertThat(LabelSelector.parse("app.kubernetes.io/name=x").matches(labels))
                .isFalse();
        assertThat(LabelSelector.parse("").isEverything()).isTrue();
        assertThat(LabelSelector.parse("app=web").requiredValue("app")).isEqualTo("web");
        assertThat(LabelSelector.parse("app=").matches(Map.of("app", ""))).isTrue();
    }

    @Test
    void malformedLabelSelectorsAreRefusedWithAReason() {
        for (String bad : List.of(
                "app=web=x", "app in ()", "app in (a", "=web", "app foo web", "-app=x", "app=we b", "a>b", "app,")) {
            assertThatThrownBy(() -> LabelSelector.parse(bad))
                    .as(bad)
                    .isInstanceOf(SelectorException.class)
                    .hasMessageContaining("unable to parse requirement");
        }
    }

    @Test
    void fieldSelectorsAcceptOnlyTheResourcesFields() throws Exception {
        FieldSelector onNode = FieldSelector.parse("spec.nodeName=node-1,status.phase!=Failed", pods);
        assertThat(onNode.matches(Map.of("spec.nodeName", "node-1", "status.phase", "Running")))
                .isTrue();
        assertThat(onNode.matches(Map.of("spec.nodeName", "node-1", "status.phase", "Failed")))
                .isFalse();
        assertThat(onNode.matches(Map.of("status.phase", "Running"))).isFalse();
        assertThat(onNode.requiredValue("spec.nodeName")).isEqualTo("node-1");
        assertThat(onNode.fields()).containsExactly("spec.nodeName", "status.phase");
        assertThat(FieldSelector.parse("spec.nodeName=", pods).matches(Map.of()))
                .isTrue();
        assertThat(FieldSelector.parse("metadata.name==a\\,b", pods).matches(Map.of("metadata.name", "a,b")))
                .isTrue();

        assertThatThrownBy(() -> FieldSelector.parse("spec.containers=x", pods))
                .isInstanceOf(SelectorException.class)
                .hasMessageContaining("\"spec.containers\" is not a known field selector")
                .hasMessageContaining("\"spec.nodeName\"");
        assertThatThrownBy(() -> FieldSelector.parse("spec.nodeName", pods)).isInstanceOf(SelectorException.class);
        assertThatThrownBy(() -> FieldSelector.parse("a=b,,c=d", pods)).isInstanceOf(SelectorException.class);
        assertThatThrownBy(() -> FieldSelector.parse("metadata.name=a=b", pods)).isInstanceOf(SelectorException.class);
    }

    @Test
    void attributesAreReadFromTheStoredObject() throws Exception {
        ObjectFields fields = new ObjectFields();
        V1.Pod.Builder message = StoredObjects.podMessage("shop", "web-0", "node-1", "Running", "web");
        message.getSpecBuilder().setHostNetwork(true);
        byte[] pod = StorageEnvelope.wrap("v1", "Pod", message.build());
        StoredObject object = StoredObject.of(pod, 0, pod.length);
        Descriptor type = KubeSchema.standard().type("v1", "Pod").orElseThrow();
        assertThat(fields.labels(pod, object)).containsExactly(Map.entry("app", "web"));
        Map<String, String> values = fields.values(
                pod, object, type, List.of("spec.nodeName", "status.phase", "spec.hostNetwork", "spec.schedulerName"));
        assertThat(values)
                .containsEntry("spec.nodeName", "node-1")
                .containsEntry("status.phase", "Running")
                .containsEntry("spec.hostNetwork", "true")
                .containsEntry("spec.schedulerName", "");
    }

    @Test
    void everySelectableFieldOfTheTableResolvesInTheSchemaWithZeroValuesWhenAbsent() throws Exception {
        ObjectFields fields = new ObjectFields();
        byte[] emptyObject = {};
        for (KubeResource r : resources.all()) {
            Descriptor type =
                    KubeSchema.standard().type(r.apiVersion(), r.kind()).orElseThrow();
            StoredObject object =
                    new StoredObject(StoredObject.StorageEncoding.PROTOBUF, r.apiVersion(), r.kind(), 0, 0, "");
            List<String> all = new ArrayList<>(r.fieldSelectors());
            Map<String, String> values = fields.values(emptyObject, object, type, all);
            assertThat(values.keySet()).as(r.plural()).containsExactlyInAnyOrderElementsOf(all);
            assertThat(values.values()).as(r.plural()).allMatch(v -> v.isEmpty() || v.equals("0") || v.equals("false"));
        }
    }
}
