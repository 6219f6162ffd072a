package io.watchfanout.kube.codec;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

/**
 * CustomResourceDefinitions as the node serves them: kube-apiserver keeps CRDs in etcd as
 * {@code apiextensions.k8s.io/v1beta1} (their storage version) and converts them to {@code v1} on
 * every read, as apiextensions' v1beta1 to v1 conversion does: the top-level {@code version},
 * {@code validation}, {@code subresources} and {@code additionalPrinterColumns} move into each
 * entry of {@code versions} (made from {@code version} when absent), a printer column's
 * {@code JSONPath} becomes {@code jsonPath}, {@code preserveUnknownFields} keeps v1beta1's default
 * of true, and a webhook conversion's {@code webhookClientConfig} and
 * {@code conversionReviewVersions} move under {@code conversion.webhook}. A {@code v1} CRD is
 * left as it is.
 *
 * <p>Stateless; thread-safe.
 */
final class CrdConversion {
    static final String V1BETA1 = "apiextensions.k8s.io/v1beta1";

    private CrdConversion() {}

    /** Converts {@code object} in place when it is a v1beta1 CustomResourceDefinition. */
    static void toV1(JsonObject object) {
        if (!"CustomResourceDefinition".equals(text(object, "kind")) || !V1BETA1.equals(text(object, "apiVersion"))) {
            return;
        }
        object.addProperty("apiVersion", "apiextensions.k8s.io/v1");
        JsonElement specElement = object.get("spec");
        if (specElement == null || !specElement.isJsonObject()) {
            return;
        }
        JsonObject spec = specElement.getAsJsonObject();
        JsonArray versions = spec.has("versions") && spec.get("versions").isJsonArray()
                ? spec.getAsJsonArray("versions")
                : new JsonArray();
        JsonElement version = spec.remove("version");
        if (versions.isEmpty() && version != null && version.isJsonPrimitive()) {
            JsonObject only = new JsonObject();
            only.add("name", version);
            only.addProperty("served", true);
            only.addProperty("storage", true);
            versions.add(only);
        }
        JsonElement validation = spec.remove("validation");
        JsonElement subresources = spec.remove("subresources");
        JsonElement columns = spec.remove("additionalPrinterColumns");
        for (JsonElement v : versions) {
            if (!v.isJsonObject()) {
                continue;
            }
            JsonObject entry = v.getAsJsonObject();
            if (validation != null && !entry.has("schema")) {
                entry.add("schema", validation.deepCopy());
            }
            if (subresources != null && !entry.has("subresources")) {
                entry.add("subresources", subresources.deepCopy());
            }
            if (columns != null && !entry.has("additionalPrinterColumns")) {
                entry.add("additionalPrinterColumns", columns.deepCopy());
            }
            JsonElement entryColumns = entry.get("additionalPrinterColumns");
            if (entryColumns != null && entryColumns.isJsonArray()) {
                for (JsonElement c : entryColumns.getAsJsonArray()) {
                    if (c.isJsonObject() && c.getAsJsonObject().has("JSONPath")) {
                        c.getAsJsonObject().add("jsonPath", c.getAsJsonObject().remove("JSONPath"));
                    }
                }
            }
        }
        spec.add("versions", versions);
        if (!spec.has("preserveUnknownFields")) {
            spec.addProperty("preserveUnknownFields", true);
        }
        JsonElement conversion = spec.get("conversion");
        if (conversion != null && conversion.isJsonObject()) {
            JsonObject c = conversion.getAsJsonObject();
            JsonElement clientConfig = c.remove("webhookClientConfig");
            JsonElement reviewVersions = c.remove("conversionReviewVersions");
            if ("Webhook".equals(text(c, "strategy")) && (clientConfig != null || reviewVersions != null)) {
                JsonObject webhook = new JsonObject();
                if (clientConfig != null) {
                    webhook.add("clientConfig", clientConfig);
                }
                webhook.add("conversionReviewVersions", reviewVersions != null ? reviewVersions : versionsV1beta1());
                c.add("webhook", webhook);
            }
        }
    }

    private static JsonArray versionsV1beta1() {
        JsonArray a = new JsonArray();
        a.add("v1beta1");
        return a;
    }

    private static String text(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : null;
    }
}
