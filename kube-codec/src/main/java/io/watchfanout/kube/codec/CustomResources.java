package io.watchfanout.kube.codec;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.watchfanout.kube.codec.resources.KubeResource;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The resource a stored CustomResourceDefinition defines, as kube-apiserver serves it: its group,
 * names and scope, served at its storage version (the tier serves objects as stored), under
 * {@code <prefix>/<group>/<plural>/}, with the storage version's {@code additionalPrinterColumns}.
 * kube-apiserver stores CRDs as JSON, in {@code apiextensions.k8s.io/v1beta1} (per-version or
 * top-level columns, {@code JSONPath}) or {@code v1} ({@code jsonPath}); both are read. A CRD
 * whose {@code Established} condition is False is not served yet.
 *
 * <p>Stateless and thread-safe; runs when a CRD changes.
 */
public final class CustomResources {
    private CustomResources() {}

    /**
     * The resource of the stored CRD {@code value}, or empty while it is not established.
     *
     * @throws UndecodableObjectException when the value is not a CRD this node can read
     */
    public static Optional<KubeResource> fromStoredDefinition(byte[] value) throws UndecodableObjectException {
        JsonObject crd;
        try {
            JsonElement parsed = JsonParser.parseString(new String(value, StandardCharsets.UTF_8));
            if (!parsed.isJsonObject()) {
                throw new UndecodableObjectException("a CustomResourceDefinition that is not a JSON object");
            }
            crd = parsed.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new UndecodableObjectException("a CustomResourceDefinition that is not JSON: " + e.getMessage());
        }
        if (!"CustomResourceDefinition".equals(JsonFields.str(crd, "kind"))) {
            throw new UndecodableObjectException("not a CustomResourceDefinition: " + JsonFields.str(crd, "kind"));
        }
        for (JsonElement c : JsonFields.arr(JsonFields.obj(crd, "status"), "conditions")) {
            JsonObject condition = c.getAsJsonObject();
            if (JsonFields.str(condition, "type").equals("Established")
                    && JsonFields.str(condition, "status").equals("False")) {
                return Optional.empty();
            }
        }
        JsonObject spec = JsonFields.obj(crd, "spec");
        JsonObject names = JsonFields.obj(spec, "names");
        String group = JsonFields.str(spec, "group");
        String plural = JsonFields.str(names, "plural");
        String kind = JsonFields.str(names, "kind");
        if (group.isEmpty() || plural.isEmpty() || kind.isEmpty()) {
            throw new UndecodableObjectException("a CustomResourceDefinition without group, plural or kind");
        }
        String version = JsonFields.str(spec, "version");
        JsonArray columns = JsonFields.arr(spec, "additionalPrinterColumns");
        for (JsonElement v : JsonFields.arr(spec, "versions")) {
            JsonObject ver = v.getAsJsonObject();
            boolean storage = ver.has("storage") && ver.get("storage").getAsBoolean();
            if (storage || version.isEmpty()) {
                version = JsonFields.str(ver, "name");
                if (ver.has("additionalPrinterColumns")) {
                    columns = JsonFields.arr(ver, "additionalPrinterColumns");
                }
                if (storage) {
                    break;
                }
            }
        }
        if (version.isEmpty()) {
            throw new UndecodableObjectException("a CustomResourceDefinition without a storage version");
        }
        List<KubeResource.PrinterColumn> printerColumns = new ArrayList<>();
        for (JsonElement c : columns) {
            JsonObject col = c.getAsJsonObject();
            String path = JsonFields.str(col, "jsonPath").isEmpty()
                    ? JsonFields.str(col, "JSONPath")
                    : JsonFields.str(col, "jsonPath");
            printerColumns.add(new KubeResource.PrinterColumn(
                    JsonFields.str(col, "name"),
                    JsonFields.str(col, "type"),
                    JsonFields.str(col, "format"),
                    JsonFields.str(col, "description"),
                    (int) JsonFields.integer(col, "priority"),
                    path));
        }
        List<String> shortNames = new ArrayList<>();
        JsonFields.arr(names, "shortNames").forEach(n -> shortNames.add(n.getAsString()));
        String singular = JsonFields.str(names, "singular");
        return Optional.of(new KubeResource(
                group,
                version,
                kind,
                plural,
                singular.isEmpty() ? kind.toLowerCase(Locale.ROOT) : singular,
                List.copyOf(shortNames),
                !"Cluster".equals(JsonFields.str(spec, "scope")),
                group + "/" + plural,
                Set.of(),
                List.copyOf(printerColumns)));
    }
}
