package io.watchfanout.kube.codec.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.watchfanout.kube.codec.CustomResources;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Custom resources served from their stored definitions, with their printer columns. */
class CustomResourcesTest {
    private static final String V1BETA1 = """
            {"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition",
             "metadata":{"name":"widgets.example.com"},
             "spec":{"group":"example.com","scope":"Namespaced",
               "names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList","shortNames":["wd"]},
               "versions":[{"name":"v1alpha1","served":true,"storage":false},{"name":"v1","served":true,"storage":true}],
               "additionalPrinterColumns":[
                 {"name":"Size","type":"integer","JSONPath":".spec.size"},
                 {"name":"Ready","type":"string","JSONPath":".status.conditions[?(@.type=='Ready')].status"},
                 {"name":"First","type":"string","JSONPath":".spec.items[0].name","priority":1}]},
             "status":{"conditions":[{"type":"Established","status":"True"}]}}""";

    @Test
    void aStoredDefinitionServesItsResourceAtTheStorageVersionWithItsColumns() throws Exception {
        KubeResource widgets =
                CustomResources.fromStoredDefinition(bytes(V1BETA1)).orElseThrow();
        assertThat(widgets.apiVersion()).isEqualTo("example.com/v1");
        assertThat(widgets.plural()).isEqualTo("widgets");
        assertThat(widgets.shortNames()).containsExactly("wd");
        assertThat(widgets.namespaced()).isTrue();
        assertThat(widgets.storagePath()).isEqualTo("example.com/widgets");

        KubeResources resources = KubeResources.builtIn("/registry").with(List.of(widgets));
        assertThat(resources
                        .parse(bytes("/registry/example.com/widgets/shop/w1"))
                        .map(k -> k.resource().kind()))
                .hasValue("Widget");

        JsonObject widget = JsonParser.parseString("""
                        {"metadata":{"name":"w1"},"spec":{"size":3,"items":[{"name":"a"}]},
                         "status":{"conditions":[{"type":"Synced","status":"False"},{"type":"Ready","status":"True"}]}}""").getAsJsonObject();
        assertThat(KubeTable.columns(widgets))
                .extracting(KubeTable.Column::name)
                .containsExactly("Name", "Size", "Ready", "First");
        assertThat(KubeTable.cells(widgets, widget, Instant.now()).toString()).isEqualTo("[\"w1\",3,\"True\",\"a\"]");
    }

    @Test
    void v1DefinitionsClusterScopeAndNotYetEstablished() throws Exception {
        String v1 = """
                {"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
                 "spec":{"group":"ops.example.com","scope":"Cluster","names":{"plural":"gadgets","kind":"Gadget"},
                   "versions":[{"name":"v2","served":true,"storage":true,
                     "additionalPrinterColumns":[{"name":"Mode","type":"string","jsonPath":".spec.mode"}]}]}}""";
        KubeResource gadgets = CustomResources.fromStoredDefinition(bytes(v1)).orElseThrow();
        assertThat(gadgets.namespaced()).isFalse();
        assertThat(gadgets.singular()).isEqualTo("gadget");
        assertThat(gadgets.printerColumns())
                .extracting(KubeResource.PrinterColumn::jsonPath)
                .containsExactly(".spec.mode");
        Optional<KubeResource> pending = CustomResources.fromStoredDefinition(
                bytes(V1BETA1.replace("\"status\":\"True\"", "\"status\":\"False\"")));
        assertThat(pending).isEmpty();
        assertThatThrownBy(() -> CustomResources.fromStoredDefinition(bytes("{\"kind\":\"Pod\"}")))
                .isInstanceOf(UndecodableObjectException.class);
        assertThatThrownBy(() -> CustomResources.fromStoredDefinition(bytes("not json")))
                .isInstanceOf(UndecodableObjectException.class);
    }

    @Test
    void jsonPathSubset() {
        JsonObject o = JsonParser.parseString(
                        "{\"a\":{\"b.c\":[1,2,3]},\"l\":[{\"k\":\"x\",\"v\":1},{\"k\":\"y\",\"v\":2}]}")
                .getAsJsonObject();
        assertThat(JsonPath.first(o, ".a['b.c'][1]").getAsInt()).isEqualTo(2);
        assertThat(JsonPath.first(o, "{.a['b.c'][-1]}").getAsInt()).isEqualTo(3);
        assertThat(JsonPath.first(o, ".l[?(@.k=='y')].v").getAsInt()).isEqualTo(2);
        assertThat(JsonPath.first(o, ".l[*].k").getAsString()).isEqualTo("x");
        assertThat(JsonPath.first(o, ".missing.x")).isNull();
        assertThat(JsonPath.first(o, ".l[bad]")).isNull();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
