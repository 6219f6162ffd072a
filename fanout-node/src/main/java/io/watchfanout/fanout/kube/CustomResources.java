package io.watchfanout.fanout.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
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
        if (!"CustomResourceDefinition".equals(KubeTable.str(crd, "kind"))) {
            throw new UndecodableObjectException("not a CustomResourceDefinition: " + KubeTable.str(crd, "kind"));
        }
        for (JsonElement c : KubeTable.arr(KubeTable.obj(crd, "status"), "conditions")) {
            JsonObject condition = c.getAsJsonObject();
            if (KubeTable.str(condition, "type").equals("Established")
                    && KubeTable.str(condition, "status").equals("False")) {
                return Optional.empty();
            }
        }
        JsonObject spec = KubeTable.obj(crd, "spec");
        JsonObject names = KubeTable.obj(spec, "names");
        String group = KubeTable.str(spec, "group");
        String plural = KubeTable.str(names, "plural");
        String kind = KubeTable.str(names, "kind");
        if (group.isEmpty() || plural.isEmpty() || kind.isEmpty()) {
            throw new UndecodableObjectException("a CustomResourceDefinition without group, plural or kind");
        }
        String version = KubeTable.str(spec, "version");
        JsonArray columns = KubeTable.arr(spec, "additionalPrinterColumns");
        for (JsonElement v : KubeTable.arr(spec, "versions")) {
            JsonObject ver = v.getAsJsonObject();
            boolean storage = ver.has("storage") && ver.get("storage").getAsBoolean();
            if (storage || version.isEmpty()) {
                version = KubeTable.str(ver, "name");
                if (ver.has("additionalPrinterColumns")) {
                    columns = KubeTable.arr(ver, "additionalPrinterColumns");
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
            String path = KubeTable.str(col, "jsonPath").isEmpty()
                    ? KubeTable.str(col, "JSONPath")
                    : KubeTable.str(col, "jsonPath");
            printerColumns.add(new KubeResource.PrinterColumn(
                    KubeTable.str(col, "name"),
                    KubeTable.str(col, "type"),
                    KubeTable.str(col, "format"),
                    KubeTable.str(col, "description"),
                    (int) KubeTable.integer(col, "priority"),
                    path));
        }
        List<String> shortNames = new ArrayList<>();
        KubeTable.arr(names, "shortNames").forEach(n -> shortNames.add(n.getAsString()));
        String singular = KubeTable.str(names, "singular");
        return Optional.of(new KubeResource(
                group,
                version,
                kind,
                plural,
                singular.isEmpty() ? kind.toLowerCase(Locale.ROOT) : singular,
                List.copyOf(shortNames),
                !"Cluster".equals(KubeTable.str(spec, "scope")),
                group + "/" + plural,
                Set.of(),
                List.copyOf(printerColumns)));
    }
}
