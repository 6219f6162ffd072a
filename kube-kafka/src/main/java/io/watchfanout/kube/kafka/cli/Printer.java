package io.watchfanout.kube.kafka.cli;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import io.watchfanout.kube.codec.table.HumanDuration;
import io.watchfanout.kube.kafka.KubeWatchEvent;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Writes watch events and lists of objects the way kubectl's {@code -o} does: a table aligned as
 * kubectl's (default; {@code wide} adds columns), {@code name} ({@code pod/web-0}), {@code json}
 * (events one a line as the watch API sends them, {@code {"type":…,"object":{…}}}; a list as a
 * kube {@code List}) or {@code yaml} (one document per event or list).
 *
 * <p>A table's rows wait for {@link #flush} so that its columns line up over the rows written
 * together; columns only ever widen, so rows flushed later still line up under the header.
 *
 * <p>Not thread-safe: the reading thread's.
 */
final class Printer {
    /** The forms of {@code -o}. */
    enum Format {
        TABLE,
        WIDE,
        NAME,
        JSON,
        YAML;

        /** The form {@code -o text} names; null for none. */
        static Format parse(String text) {
            for (Format f : values()) {
                if (f != TABLE && f.name().toLowerCase(Locale.ROOT).equals(text)) {
                    return f;
                }
            }
            return null;
        }
    }

    private static final String GAP = "   ";

    private final Format format;
    private final PrintWriter out;
    private final boolean namespaceColumn;
    private final Instant now;
    private final List<List<String>> rows = new ArrayList<>();
    private final List<Integer> widths = new ArrayList<>();
    private boolean headerDone;

    /**
     * @param format the {@code -o} form
     * @param out where objects go
     * @param namespaceColumn whether tables have a NAMESPACE column (kubectl's {@code -A})
     * @param now the time ages are counted to
     */
    Printer(Format format, PrintWriter out, boolean namespaceColumn, Instant now) {
        this.format = format;
        this.out = out;
        this.namespaceColumn = namespaceColumn;
        this.now = now;
    }

    /** Writes one watch event ({@code tree}: its object, parsed). */
    void event(KubeWatchEvent e, JsonObject tree) {
        switch (format) {
            case NAME -> out.println(name(e));
            case JSON ->
                out.println("{\"type\":\"" + e.type() + "\",\"object\":"
                        + new String(e.object(), StandardCharsets.UTF_8) + "}");
            case YAML -> {
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("type", e.type().name());
                doc.put("object", plain(tree));
                out.print("---\n" + yaml().dump(doc));
            }
            default -> {
                List<String> row = new ArrayList<>();
                if (namespaceColumn) {
                    row.add(e.namespace());
                }
                row.add(e.name());
                row.add(e.type().name());
                row.add(Long.toString(e.resourceVersion()));
                row.add(e.time() == null ? "<unknown>" : HumanDuration.format(Duration.between(e.time(), now)));
                if (format == Format.WIDE) {
                    row.add(e.time() == null ? "<unknown>" : e.time().toString());
                    row.add(labels(tree));
                }
                rows.add(row);
            }
        }
    }

    /** Writes the objects of a list at {@code revision} ({@code trees}: the objects, parsed, in the same order). */
    void list(long revision, List<KubeWatchEvent> objects, List<JsonObject> trees) {
        switch (format) {
            case NAME -> objects.forEach(o -> out.println(name(o)));
            case JSON, YAML -> {
                JsonObject list = new JsonObject();
                list.addProperty("apiVersion", "v1");
                list.addProperty("kind", "List");
                JsonObject metadata = new JsonObject();
                metadata.addProperty("resourceVersion", Long.toString(revision));
                list.add("metadata", metadata);
                JsonArray items = new JsonArray();
                trees.forEach(items::add);
                list.add("items", items);
                out.println(
                        format == Format.JSON
                                ? new GsonBuilder()
                                        .setPrettyPrinting()
                                        .disableHtmlEscaping()
                                        .create()
                                        .toJson(list)
                                : yaml().dump(plain(list)).stripTrailing());
            }
            default -> {
                for (int i = 0; i < objects.size(); i++) {
                    KubeWatchEvent o = objects.get(i);
                    List<String> row = new ArrayList<>();
                    if (namespaceColumn) {
                        row.add(o.namespace());
                    }
                    row.add(o.name());
                    row.add(Long.toString(o.resourceVersion()));
                    row.add(created(trees.get(i)));
                    if (format == Format.WIDE) {
                        row.add(labels(trees.get(i)));
                    }
                    rows.add(row);
                }
                flush(false);
            }
        }
        out.flush();
    }

    /** Whether the format needs each object parsed. */
    boolean needsTree() {
        return format == Format.WIDE || format == Format.YAML;
    }

    /** Writes the table rows waiting, under the header of the events' table; then flushes {@code out}. */
    void flush() {
        flush(true);
    }

    private void flush(boolean events) {
        if (!rows.isEmpty()) {
            List<String> header = new ArrayList<>();
            if (namespaceColumn) {
                header.add("NAMESPACE");
            }
            header.add("NAME");
            if (events) {
                header.add("EVENT");
            }
            header.add("RESOURCEVERSION");
            header.add("AGE");
            if (format == Format.WIDE) {
                if (events) {
                    header.add("TIME");
                }
                header.add("LABELS");
            }
            widen(header);
            rows.forEach(this::widen);
            if (!headerDone) {
                line(header);
                headerDone = true;
            }
            rows.forEach(this::line);
            rows.clear();
        }
        out.flush();
    }

    private void widen(List<String> row) {
        for (int i = 0; i < row.size(); i++) {
            if (widths.size() <= i) {
                widths.add(0);
            }
            widths.set(i, Math.max(widths.get(i), row.get(i).length()));
        }
    }

    private void line(List<String> row) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < row.size(); i++) {
            b.append(row.get(i));
            if (i < row.size() - 1) {
                b.append(" ".repeat(widths.get(i) - row.get(i).length())).append(GAP);
            }
        }
        out.println(b);
    }

    /** kubectl's {@code -o name}: {@code pod/web-0}, {@code deployment.apps/web}. */
    private static String name(KubeWatchEvent e) {
        String kind = e.kind().toLowerCase(Locale.ROOT);
        return (e.group().isEmpty() ? kind : kind + "." + e.group()) + "/" + e.name();
    }

    /** kubectl's {@code --show-labels}: {@code a=1,b=2}, or {@code <none>}. */
    private static String labels(JsonObject tree) {
        Map<String, String> labels = new TreeMap<>(labelsOf(tree));
        if (labels.isEmpty()) {
            return "<none>";
        }
        StringBuilder b = new StringBuilder();
        labels.forEach((k, v) ->
                b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return b.toString();
    }

    /** The object's {@code metadata.labels}; empty when it has none. */
    static Map<String, String> labelsOf(JsonObject tree) {
        Map<String, String> labels = new LinkedHashMap<>();
        JsonElement metadata = tree.get("metadata");
        if (metadata != null && metadata.isJsonObject()) {
            JsonElement l = metadata.getAsJsonObject().get("labels");
            if (l != null && l.isJsonObject()) {
                l.getAsJsonObject()
                        .entrySet()
                        .forEach(en -> labels.put(en.getKey(), en.getValue().getAsString()));
            }
        }
        return labels;
    }

    private String created(JsonObject tree) {
        JsonElement metadata = tree.get("metadata");
        JsonElement created = metadata != null && metadata.isJsonObject()
                ? metadata.getAsJsonObject().get("creationTimestamp")
                : null;
        if (created == null || !created.isJsonPrimitive()) {
            return "<unknown>";
        }
        try {
            return HumanDuration.format(Duration.between(Instant.parse(created.getAsString()), now));
        } catch (DateTimeParseException e) {
            return "<unknown>";
        }
    }

    private static Yaml yaml() {
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        options.setIndicatorIndent(0);
        return new Yaml(options);
    }

    /** A JSON tree as maps, lists, strings, booleans and numbers (whole numbers stay whole), for YAML. */
    private static Object plain(JsonElement e) {
        if (e == null || e.isJsonNull()) {
            return null;
        }
        if (e.isJsonObject()) {
            Map<String, Object> m = new LinkedHashMap<>();
            e.getAsJsonObject().entrySet().forEach(en -> m.put(en.getKey(), plain(en.getValue())));
            return m;
        }
        if (e.isJsonArray()) {
            List<Object> l = new ArrayList<>();
            e.getAsJsonArray().forEach(x -> l.add(plain(x)));
            return l;
        }
        JsonPrimitive p = e.getAsJsonPrimitive();
        if (p.isBoolean()) {
            return p.getAsBoolean();
        }
        if (p.isNumber()) {
            BigDecimal d = p.getAsBigDecimal();
            try {
                return d.longValueExact();
            } catch (ArithmeticException notWhole) {
                return d.doubleValue();
            }
        }
        return p.getAsString();
    }

    /** Parses an object's JSON bytes. */
    static JsonObject tree(byte[] object) {
        return JsonParser.parseString(new String(object, StandardCharsets.UTF_8))
                .getAsJsonObject();
    }
}
