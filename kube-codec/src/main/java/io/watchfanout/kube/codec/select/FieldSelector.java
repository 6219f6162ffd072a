package io.watchfanout.kube.codec.select;

import io.watchfanout.kube.codec.resources.KubeResource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A parsed {@code fieldSelector} for one resource, with kube-apiserver's syntax and rules
 * (k8s.io/apimachinery {@code fields.ParseSelector}): requirements joined by commas, each
 * {@code field=value}, {@code field==value} or {@code field!=value}, with {@code \,}, {@code \=}
 * and {@code \\} escaping a value's commas, equals signs and backslashes; only the fields the
 * resource supports ({@link KubeResource#selectsField}), which a 400 lists otherwise.
 *
 * <p>Immutable and thread-safe.
 */
public final class FieldSelector {
    private static final FieldSelector EVERYTHING = new FieldSelector(List.of());

    private final List<Requirement> requirements;

    private FieldSelector(List<Requirement> requirements) {
        this.requirements = requirements;
    }

    /** The selector that matches every object. */
    public static FieldSelector everything() {
        return EVERYTHING;
    }

    /**
     * Parses a {@code fieldSelector} value for {@code resource}.
     *
     * @throws SelectorException for a malformed term or a field the resource does not support
     */
    public static FieldSelector parse(String selector, KubeResource resource) throws SelectorException {
        if (selector == null || selector.isBlank()) {
            return EVERYTHING;
        }
        List<Requirement> requirements = new ArrayList<>();
        for (String term : splitTerms(selector)) {
            requirements.add(term(term.strip(), resource));
        }
        return new FieldSelector(List.copyOf(requirements));
    }

    /** True when this selector matches every object. */
    public boolean isEverything() {
        return requirements.isEmpty();
    }

    /** The fields this selector reads, in order, each once. */
    public List<String> fields() {
        List<String> fields = new ArrayList<>();
        for (Requirement r : requirements) {
            if (!fields.contains(r.field)) {
                fields.add(r.field);
            }
        }
        return fields;
    }

    /**
     * True when every requirement holds for the object whose field values are {@code values}
     * (a field absent from the map has the empty value, as kube-apiserver's field sets give it).
     */
    public boolean matches(Map<String, String> values) {
        for (Requirement r : requirements) {
            String v = values.getOrDefault(r.field, "");
            if (v.equals(r.value) == r.notEqual) {
                return false;
            }
        }
        return true;
    }

    /**
     * The value every matching object has for {@code field} ({@code field=value}), or null: the
     * key under which an index of watchers (e.g. by {@code spec.nodeName}) files this watch.
     */
    public String requiredValue(String field) {
        for (Requirement r : requirements) {
            if (r.field.equals(field) && !r.notEqual) {
                return r.value;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return String.join(
                ",",
                requirements.stream()
                        .map(r -> r.field + (r.notEqual ? "!=" : "=") + r.value)
                        .toList());
    }

    private record Requirement(String field, boolean notEqual, String value) {}

    private static Requirement term(String term, KubeResource resource) throws SelectorException {
        int op = -1;
        int opLength = 0;
        boolean notEqual = false;
        for (int i = 0; i < term.length(); i++) {
            char c = term.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '!' && i + 1 < term.length() && term.charAt(i + 1) == '=') {
                op = i;
                opLength = 2;
                notEqual = true;
                break;
            } else if (c == '=') {
                op = i;
                opLength = i + 1 < term.length() && term.charAt(i + 1) == '=' ? 2 : 1;
                break;
            }
        }
        if (op <= 0) {
            throw new SelectorException("invalid selector: '" + term + "'; can't understand '" + term
                    + "' (expected: field=value, field==value or field!=value)");
        }
        String field = term.substring(0, op).strip();
        String value = unescape(term.substring(op + opLength).strip());
        if (!resource.selectsField(field)) {
            TreeSet<String> known = new TreeSet<>(resource.fieldSelectors());
            StringBuilder only = new StringBuilder("\"metadata.name\", \"metadata.namespace\"");
            for (String k : known) {
                only.append(", \"").append(k).append('"');
            }
            throw new SelectorException(
                    "\"" + field + "\" is not a known field selector: only " + only + " (" + resource.plural() + ")");
        }
        return new Requirement(field, notEqual, value);
    }

    private static List<String> splitTerms(String selector) throws SelectorException {
        List<String> terms = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < selector.length(); i++) {
            char c = selector.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == ',') {
                terms.add(selector.substring(start, i));
                start = i + 1;
            }
        }
        terms.add(selector.substring(start));
        for (String t : terms) {
            if (t.isBlank()) {
                throw new SelectorException("invalid selector: '" + selector + "' has an empty term");
            }
        }
        return terms;
    }

    private static String unescape(String value) throws SelectorException {
        StringBuilder out = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\') {
                if (i + 1 >= value.length()) {
                    throw new SelectorException("invalid field selector value '" + value + "': ends with a backslash");
                }
                char next = value.charAt(++i);
                if (next != '\\' && next != ',' && next != '=') {
                    throw new SelectorException(
                            "invalid field selector value '" + value + "': invalid escape \\" + next);
                }
                out.append(next);
            } else if (c == '=' || c == ',') {
                throw new SelectorException("invalid field selector value '" + value + "': unescaped " + c);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
