package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CrdConversionTest {
    @Test
    void aStoredV1beta1DefinitionIsServedAsV1() throws Exception {
        String stored = """
                {"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition",
                 "metadata":{"name":"backups.demo.example.com"},
                 "spec":{"group":"demo.example.com","version":"v1","scope":"Namespaced",
                  "names":{"plural":"backups","kind":"Backup"},
                  "validation":{"openAPIV3Schema":{"type":"object"}},
                  "subresources":{"status":{}},
                  "additionalPrinterColumns":[{"name":"Phase","type":"string","JSONPath":".status.phase"}],
                  "conversion":{"strategy":"None"}},
                 "status":{"storedVersions":["v1"]}}""";
        JsonObject served = JsonParser.parseString(new String(
                        KubeWatchFrames.jsonStoredObject(stored.getBytes(StandardCharsets.UTF_8), 42),
                        StandardCharsets.UTF_8))
                .getAsJsonObject();
        assertThat(served.get("apiVersion").getAsString()).isEqualTo("apiextensions.k8s.io/v1");
        JsonObject spec = served.getAsJsonObject("spec");
        assertThat(spec.has("version")).isFalse();
        assertThat(spec.has("validation")).isFalse();
        assertThat(spec.has("additionalPrinterColumns")).isFalse();
        assertThat(spec.get("preserveUnknownFields").getAsBoolean()).isTrue();
        JsonObject v1 = spec.getAsJsonArray("versions").get(0).getAsJsonObject();
        assertThat(v1.get("name").getAsString()).isEqualTo("v1");
        assertThat(v1.get("served").getAsBoolean()).isTrue();
        assertThat(v1.get("storage").getAsBoolean()).isTrue();
        assertThat(v1.getAsJsonObject("schema")
                        .getAsJsonObject("openAPIV3Schema")
                        .get("type")
                        .getAsString())
                .isEqualTo("object");
        assertThat(v1.getAsJsonObject("subresources").has("status")).isTrue();
        JsonObject column = v1.getAsJsonArray("additionalPrinterColumns").get(0).getAsJsonObject();
        assertThat(column.get("jsonPath").getAsString()).isEqualTo(".status.phase");
        assertThat(column.has("JSONPath")).isFalse();
        assertThat(served.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("42");
    }

    @Test
    void aWebhookConversionMovesUnderWebhookAndV1StaysAsItIs() {
        JsonObject crd = JsonParser.parseString("""
                {"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition",
                 "spec":{"versions":[{"name":"v1","served":true,"storage":true}],
                  "conversion":{"strategy":"Webhook","webhookClientConfig":{"url":"https://c"},
                   "conversionReviewVersions":["v1"]}}}""").getAsJsonObject();
        CrdConversion.toV1(crd);
        JsonObject conversion = crd.getAsJsonObject("spec").getAsJsonObject("conversion");
        assertThat(conversion.has("webhookClientConfig")).isFalse();
        assertThat(conversion
                        .getAsJsonObject("webhook")
                        .getAsJsonObject("clientConfig")
                        .get("url")
                        .getAsString())
                .isEqualTo("https://c");
        JsonObject v1 = JsonParser.parseString(
                        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                                + "\"spec\":{\"version\":\"x\"}}")
                .getAsJsonObject();
        String before = v1.toString();
        CrdConversion.toV1(v1);
        assertThat(v1.toString()).isEqualTo(before);
    }
}
