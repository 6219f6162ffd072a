package io.watchfanout.kube.codec.select;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A parsed {@code labelSelector}, with kube-apiserver's syntax and semantics
 * (k8s.io/apimachinery {@code labels.Parse}): requirements joined by commas, all of which must
 * hold; {@code k=v}, {@code k==v}, {@code k!=v} (also true when the label is absent),
 * {@code k in (a,b)}, {@code k notin (a,b)} (true when absent), {@code k} (exists), {@code !k}
 * (does not exist), {@code k>N} and {@code k<N} (integer comparison, false when absent or not an
 * integer). Keys and values are validated as label keys and values.
 *
 * <p>Immutable and thread-safe: parsed once per watch and evaluated per event without allocating.
 */
public final class LabelSelector {
    private static final LabelSelector EVERYTHING = new LabelSelector(List.of());
    private static final Pattern NAME = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)");
    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private final List<Requirement> requirements;

    private LabelSelector(List<Requirement> requirements) {
        this.requirements = requirements;
    }

    /** The selector that matches every object (an empty or absent {@code labelSelector}). */
    public static LabelSelector everything() {
        return EVERYTHING;
    }

    /**
     * Parses a {@code labelSelector} value.
     *
     * @throws SelectorException with a message naming what was expected where, as a 400 answers
     */
    public static LabelSelector parse(String selector) throws SelectorException {
        if (selector == null || selector.isBlank()) {
            return EVERYTHING;
        }
        Parser p = new Parser(selector);
        List<Requirement> requirements = new ArrayList<>();
        do {
            requirements.add(p.requirement());
        } while (p.comma());
        p.end();
        return new LabelSelector(List.copyOf(requirements));
    }

    /** True when this selector matches every object. */
    public boolean isEverything() {
        return requirements.isEmpty();
    }

    /** True when the labels {@code labels} satisfy every requirement. */
    public boolean matches(Map<String, String> labels) {
        for (Requirement r : requirements) {
            if (!r.matches(labels)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The value every matching object must have for {@code key} ({@code key=v} or
     * {@code key in (v)}), or null: what an index of watchers by label value could use.
     */
    public String requiredValue(String key) {
        for (Requirement r : requirements) {
            if (r.key.equals(key) && r.op == Op.IN && r.values.size() == 1) {
                return r.values.iterator().next();
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return String.join(",", requirements.stream().map(Requirement::toString).toList());
    }

    private enum Op {
        IN,
        NOT_IN,
        EXISTS,
        DOES_NOT_EXIST,
        GREATER_THAN,
        LESS_THAN
    }

    private record Requirement(String key, Op op, Set<String> values, long number) {
        boolean matches(Map<String, String> labels) {
            String value = labels.get(key);
            return switch (op) {
                case IN -> value != null && values.contains(value);
                case NOT_IN -> value == null || !values.contains(value);
                case EXISTS -> value != null;
                case DOES_NOT_EXIST -> value == null;
                case GREATER_THAN, LESS_THAN -> {
                    if (value == null) {
                        yield false;
                    }
                    try {
                        long v = Long.parseLong(value);
                        yield op == Op.GREATER_THAN ? v > number : v < number;
                    } catch (NumberFormatException e) {
                        yield false;
                    }
                }
            };
        }

        @Override
        public String toString() {
            return switch (op) {
                case IN -> values.size() == 1 ? key + "=" + values.iterator().next() : key + " in " + values;
                case NOT_IN -> key + " notin " + values;
                case EXISTS -> key;
                case DOES_NOT_EXIST -> "!" + key;
                case GREATER_THAN -> key + ">" + number;
                case LESS_THAN -> key + "<" + number;
            };
        }
    }

    /** A hand-written scanner: the grammar is small and its errors must say where they are. */
    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        Requirement requirement() throws SelectorException {
            skipSpace();
            boolean not = peek() == '!';
            if (not) {
                pos++;
                skipSpace();
            }
            String key = key();
            skipSpace();
            if (not) {
                return new Requirement(key, Op.DOES_NOT_EXIST, Set.of(), 0);
            }
            if (atEnd() || peek() == ',') {
                return new Requirement(key, Op.EXISTS, Set.of(), 0);
            }
            char c = peek();
            if (c == '=' || c == '!') {
                boolean notEqual = c == '!';
                pos++;
                if (notEqual) {
                    expect('=');
                } else if (peek() == '=') {
                    pos++;
                }
                skipSpace();
                String value = value();
                return new Requirement(key, notEqual ? Op.NOT_IN : Op.IN, Set.of(value), 0);
            }
            if (c == '>' || c == '<') {
                pos++;
                skipSpace();
                String value = value();
                try {
                    return new Requirement(
                            key, c == '>' ? Op.GREATER_THAN : Op.LESS_THAN, Set.of(), Long.parseLong(value));
                } catch (NumberFormatException e) {
                    throw new SelectorException(
                            "unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer: "
                                    + value);
                }
            }
            String word = word();
            if (word.equals("in") || word.equals("notin")) {
                return new Requirement(key, word.equals("in") ? Op.IN : Op.NOT_IN, valueSet(), 0);
            }
            throw error("found '" + word + "', expected: in, notin, =, ==, !=, gt, lt");
        }

        private Set<String> valueSet() throws SelectorException {
            skipSpace();
            expect('(');
            Set<String> values = new TreeSet<>();
            while (true) {
                skipSpace();
                if (peek() == ')' && values.isEmpty()) {
                    throw error("for 'in', 'notin' operators, values set can't be empty");
                }
                values.add(value());
                skipSpace();
                if (peek() == ',') {
                    pos++;
                } else {
                    expect(')');
                    return Set.copyOf(values);
                }
            }
        }

        boolean comma() {
            skipSpace();
            if (!atEnd() && peek() == ',') {
                pos++;
                return true;
            }
            return false;
        }

        void end() throws SelectorException {
            skipSpace();
            if (!atEnd()) {
                throw error("found '" + s.substring(pos) + "', expected: ',' or end of string");
            }
        }

        private String key() throws SelectorException {
            String key = word();
            if (key.isEmpty()) {
                throw error("found '" + (atEnd() ? "" : String.valueOf(peek())) + "', expected: identifier");
            }
            int slash = key.indexOf('/');
            String name = slash < 0 ? key : key.substring(slash + 1);
            if ((slash >= 0
                            && (slash > 253
                                    || !DNS_SUBDOMAIN
                                            .matcher(key.substring(0, slash))
                                            .matches()))
                    || name.length() > 63
                    || !NAME.matcher(name).matches()) {
                throw new SelectorException("unable to parse requirement: invalid label key \"" + key
                        + "\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start"
                        + " and end with an alphanumeric character (with an optional DNS subdomain prefix and '/')");
            }
            return key;
        }

        private String value() throws SelectorException {
            String value = word();
            if (value.length() > 63 || (!value.isEmpty() && !NAME.matcher(value).matches())) {
                throw new SelectorException("unable to parse requirement: invalid label value: \"" + value
                        + "\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_'"
                        + " or '.', and must start and end with an alphanumeric character");
            }
            return value;
        }

        private String word() {
            int start = pos;
            while (!atEnd()) {
                char c = peek();
                if (c == ' ' || c == '\t' || c == ',' || c == '=' || c == '!' || c == '(' || c == ')' || c == '<'
                        || c == '>') {
                    break;
                }
                pos++;
            }
            return s.substring(start, pos);
        }

        private void expect(char c) throws SelectorException {
            if (atEnd() || peek() != c) {
                throw error("found '" + (atEnd() ? "" : String.valueOf(peek())) + "', expected: '" + c + "'");
            }
            pos++;
        }

        private SelectorException error(String what) {
            return new SelectorException(
                    "unable to parse requirement: " + what + " at position " + pos + " of \"" + s + "\"");
        }

        private void skipSpace() {
            while (!atEnd() && (peek() == ' ' || peek() == '\t')) {
                pos++;
            }
        }

        private boolean atEnd() {
            return pos >= s.length();
        }

        private char peek() {
            return atEnd() ? '\0' : s.charAt(pos);
        }
    }
}
