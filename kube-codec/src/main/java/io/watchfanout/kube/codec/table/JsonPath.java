package io.watchfanout.kube.codec.table;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonPrimitive;
import java.util.ArrayList;
import java.util.List;

/**
 * The JSONPath subset of CRD printer columns (k8s.io/client-go {@code util/jsonpath} as
 * {@code additionalPrinterColumns} use it): {@code .field} steps, {@code ['field.with.dots']},
 * {@code [N]}, {@code [*]} and equality filters {@code [?(@.type=="Ready")]}; the first value found
 * is the cell, as kube-apiserver's table convertor takes it.
 *
 * <p>Stateless and thread-safe.
 */
final class JsonPath {
    private JsonPath() {}

    /** The first value at {@code path} in {@code root}, or null when there is none or the path is not understood. */
    static JsonElement first(JsonElement root, String path) {
        String p = path.strip();
        if (p.startsWith("{") && p.endsWith("}")) {
            p = p.substring(1, p.length() - 1);
        }
        if (p.startsWith("$")) {
            p = p.substring(1);
        }
        List<JsonElement> current = new ArrayList<>(List.of(root));
        int i = 0;
        while (i < p.length() && !current.isEmpty()) {
            char c = p.charAt(i);
            if (c == '.') {
                int end = i + 1;
                while (end < p.length() && p.charAt(end) != '.' && p.charAt(end) != '[') {
                    end++;
                }
                current = field(current, p.substring(i + 1, end));
                i = end;
            } else if (c == '[') {
                int end = p.indexOf(']', i);
                if (end < 0) {
                    return null;
                }
                current = bracket(current, p.substring(i + 1, end));
                if (current == null) {
                    return null;
                }
                i = end + 1;
            } else {
                return null;
            }
        }
        return current.isEmpty() ? null : current.get(0);
    }

    private static List<JsonElement> field(List<JsonElement> from, String name) {
        List<JsonElement> out = new ArrayList<>();
        for (JsonElement e : from) {
            if (e.isJsonObject() && e.getAsJsonObject().has(name)) {
                out.add(e.getAsJsonObject().get(name));
            }
        }
        return out;
    }

    private static List<JsonElement> bracket(List<JsonElement> from, String inside) {
        String s = inside.strip();
        if (s.startsWith("'") && s.endsWith("'") && s.length() >= 2) {
            return field(from, s.substring(1, s.length() - 1));
        }
        List<JsonElement> out = new ArrayList<>();
        if (s.equals("*")) {
            for (JsonElement e : from) {
                if (e.isJsonArray()) {
                    e.getAsJsonArray().forEach(out::add);
                } else if (e.isJsonObject()) {
                    e.getAsJsonObject().entrySet().forEach(x -> out.add(x.getValue()));
                }
            }
            return out;
        }
        if (s.startsWith("?(") && s.endsWith(")")) {
            String filter = s.substring(2, s.length() - 1).strip();
            int eq = filter.indexOf("==");
            if (!filter.startsWith("@.") || eq < 0) {
                return null;
            }
            String name = filter.substring(2, eq).strip();
            String literal = filter.substring(eq + 2).strip();
            if (literal.length() >= 2 && (literal.startsWith("\"") || literal.startsWith("'"))) {
                literal = literal.substring(1, literal.length() - 1);
            }
            for (JsonElement e : from) {
                if (!e.isJsonArray()) {
                    continue;
                }
                for (JsonElement item : e.getAsJsonArray()) {
                    JsonElement v = item.isJsonObject() ? item.getAsJsonObject().get(name) : null;
                    if (v != null && v.isJsonPrimitive() && v.getAsString().equals(literal)) {
                        out.add(item);
                    }
                }
            }
            return out;
        }
        try {
            int index = Integer.parseInt(s);
            for (JsonElement e : from) {
                if (e.isJsonArray()) {
                    JsonArray a = e.getAsJsonArray();
                    int k = index < 0 ? a.size() + index : index;
                    if (k >= 0 && k < a.size()) {
                        out.add(a.get(k));
                    }
                }
            }
            return out;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** A table cell from a value: numbers, booleans and strings as themselves, anything else as its JSON. */
    static JsonElement cell(JsonElement value) {
        if (value == null || value.isJsonNull()) {
            return new JsonPrimitive("");
        }
        if (value.isJsonPrimitive()) {
            return value;
        }
        return new JsonPrimitive(value.toString());
    }
}
