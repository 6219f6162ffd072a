package io.watchfanout.fanout.security;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code --authz=file:PATH}: rules in a JSON file, reloaded when it changes (docs/SECURITY.md
 * shows the format):
 *
 * <pre>{@code
 * {"rules": [
 *   {"subjects": ["alice"], "groups": ["readers"], "verbs": ["watch", "read"],
 *    "prefixes": ["/registry/configmaps/"],
 *    "keys": ["/registry/namespaces/default"],
 *    "ranges": [{"key": "/a/", "rangeEnd": "/b/"}]}
 * ]}
 * }</pre>
 *
 * A rule applies to an identity named in {@code subjects} or carrying a group in {@code groups}
 * ({@code "*"} matches everyone, anonymous included); it grants its {@code verbs} ({@code "*"}
 * for all) on the union of its prefixes ({@code ""} = every key), single keys and
 * {@code [key, rangeEnd)} ranges ({@code rangeEnd "\u0000"} = unbounded, etcd's convention);
 * keys are UTF-8. Nothing is allowed that no rule grants (default deny), and a request is allowed
 * only when the union of the identity's grants for the verb covers its whole normalised range.
 * Unknown fields are errors, so that a typo never silently grants or denies.
 *
 * <p>Thread-safe: rules are replaced as a whole by {@link #reload()}.
 */
final class PolicyFile implements AccessPolicy {
    private static final Set<String> RULE_FIELDS = Set.of("subjects", "groups", "verbs", "prefixes", "keys", "ranges");

    private final ReloadingFile<List<Rule>> rules;

    private record Rule(Set<String> subjects, Set<String> groups, Set<Verb> verbs, List<KeyRange> ranges) {
        boolean appliesTo(Identity id, Verb verb) {
            if (!verbs.contains(verb)) {
                return false;
            }
            if (subjects.contains("*") || groups.contains("*") || subjects.contains(id.name())) {
                return true;
            }
            for (String g : id.groups()) {
                if (groups.contains(g)) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Reads the file.
     *
     * @throws IOException when it cannot be read or its rules are invalid (the message names the rule)
     */
    PolicyFile(Path file) throws IOException {
        this.rules = new ReloadingFile<>(file, PolicyFile::parse);
    }

    @Override
    public boolean allows(Identity identity, Verb verb, KeyRange range) {
        List<KeyRange> granted = new ArrayList<>();
        for (Rule r : rules.get()) {
            if (r.appliesTo(identity, verb)) {
                granted.addAll(r.ranges());
            }
        }
        return RangeCover.of(granted).covers(range);
    }

    @Override
    public boolean reload() throws IOException {
        return rules.reload();
    }

    @Override
    public String describe() {
        return "file:" + rules.file() + " (" + rules.get().size() + " rules)";
    }

    private static List<Rule> parse(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        try {
            JsonElement root = JsonParser.parseString(text);
            if (!root.isJsonObject() || !root.getAsJsonObject().has("rules")) {
                throw new IOException(file + ": expected {\"rules\": [...]}");
            }
            for (String k : root.getAsJsonObject().keySet()) {
                if (!k.equals("rules")) {
                    throw new IOException(file + ": unknown field \"" + k + "\" (expected: rules)");
                }
            }
            JsonArray array = root.getAsJsonObject().getAsJsonArray("rules");
            List<Rule> rules = new ArrayList<>();
            for (int i = 0; i < array.size(); i++) {
                rules.add(rule(file, i, array.get(i)));
            }
            return List.copyOf(rules);
        } catch (JsonParseException | ClassCastException | IllegalStateException e) {
            throw new IOException(file + ": not a valid policy file: " + e.getMessage(), e);
        }
    }

    private static Rule rule(Path file, int index, JsonElement e) throws IOException {
        String where = file + ": rule " + index;
        if (!e.isJsonObject()) {
            throw new IOException(where + ": expected an object");
        }
        JsonObject o = e.getAsJsonObject();
        for (String k : o.keySet()) {
            if (!RULE_FIELDS.contains(k)) {
                throw new IOException(
                        where + ": unknown field \"" + k + "\" (expected: " + String.join(", ", RULE_FIELDS) + ")");
            }
        }
        Set<String> subjects = Set.copyOf(strings(o, "subjects", where));
        Set<String> groups = Set.copyOf(strings(o, "groups", where));
        if (subjects.isEmpty() && groups.isEmpty()) {
            throw new IOException(where + ": names no subjects and no groups");
        }
        EnumSet<Verb> verbs = EnumSet.noneOf(Verb.class);
        for (String v : strings(o, "verbs", where)) {
            if (v.equals("*")) {
                verbs.addAll(EnumSet.allOf(Verb.class));
            } else {
                try {
                    verbs.add(Verb.ofRuleName(v));
                } catch (IllegalArgumentException bad) {
                    throw new IOException(where + ": " + bad.getMessage(), bad);
                }
            }
        }
        if (verbs.isEmpty()) {
            throw new IOException(where + ": names no verbs (expected: watch, read, write or *)");
        }
        List<KeyRange> ranges = new ArrayList<>();
        for (String p : strings(o, "prefixes", where)) {
            ranges.add(KeyRange.prefix(ByteString.copyFromUtf8(p)));
        }
        for (String k : strings(o, "keys", where)) {
            ranges.add(KeyRange.single(ByteString.copyFromUtf8(k)));
        }
        if (o.has("ranges")) {
            JsonArray rs = o.getAsJsonArray("ranges");
            for (int i = 0; i < rs.size(); i++) {
                JsonObject r = rs.get(i).getAsJsonObject();
                if (!r.has("key") || !r.has("rangeEnd") || r.size() != 2) {
                    throw new IOException(where + ": range " + i + ": expected {\"key\": ..., \"rangeEnd\": ...}");
                }
                try {
                    ranges.add(KeyRange.of(
                            ByteString.copyFromUtf8(r.get("key").getAsString()),
                            ByteString.copyFromUtf8(r.get("rangeEnd").getAsString())));
                } catch (IllegalArgumentException bad) {
                    throw new IOException(where + ": range " + i + ": " + bad.getMessage(), bad);
                }
            }
        }
        if (ranges.isEmpty()) {
            throw new IOException(where + ": grants no keys (expected: prefixes, keys or ranges)");
        }
        return new Rule(subjects, groups, Set.copyOf(verbs), List.copyOf(ranges));
    }

    private static List<String> strings(JsonObject o, String field, String where) throws IOException {
        if (!o.has(field)) {
            return List.of();
        }
        if (!o.get(field).isJsonArray()) {
            throw new IOException(where + ": " + field + ": expected a list of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonElement e : o.getAsJsonArray(field)) {
            if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
                throw new IOException(where + ": " + field + ": expected a list of strings");
            }
            out.add(e.getAsString());
        }
        return out;
    }
}
