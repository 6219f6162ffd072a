package io.watchfanout.localstack.demo;

import java.util.Arrays;
import java.util.Locale;

/**
 * A minimal streaming JSON writer for the demo's documents: objects, arrays, strings, numbers
 * and booleans, with correct string escaping and commas. Not thread-safe; one per document.
 *
 * <pre>{@code
 * String doc = new Json().beginObject().field("kind", "Pod").name("spec").beginObject()...endObject().toString();
 * }</pre>
 */
final class Json {
    private final StringBuilder out = new StringBuilder(1024);
    /** Whether the current container already holds a value (a comma goes before the next one). */
    private boolean[] hasValue = new boolean[16];

    private int depth;
    private boolean afterName;

    Json beginObject() {
        beforeValue();
        out.append('{');
        push();
        return this;
    }

    Json endObject() {
        depth--;
        out.append('}');
        return this;
    }

    Json beginArray() {
        beforeValue();
        out.append('[');
        push();
        return this;
    }

    Json endArray() {
        depth--;
        out.append(']');
        return this;
    }

    /** The name of the next field of the current object. */
    Json name(String name) {
        beforeValue();
        quote(name);
        out.append(':');
        afterName = true;
        return this;
    }

    Json value(String value) {
        beforeValue();
        quote(value);
        return this;
    }

    Json value(long value) {
        beforeValue();
        out.append(value);
        return this;
    }

    Json value(double value) {
        beforeValue();
        out.append(String.format(Locale.ROOT, "%.3f", value));
        return this;
    }

    Json value(boolean value) {
        beforeValue();
        out.append(value);
        return this;
    }

    /** A raw, already valid JSON value (e.g. a nested document). */
    Json raw(String json) {
        beforeValue();
        out.append(json);
        return this;
    }

    Json field(String name, String value) {
        return name(name).value(value);
    }

    Json field(String name, long value) {
        return name(name).value(value);
    }

    Json field(String name, boolean value) {
        return name(name).value(value);
    }

    private void push() {
        depth++;
        if (depth >= hasValue.length) {
            hasValue = Arrays.copyOf(hasValue, hasValue.length * 2);
        }
        hasValue[depth] = false;
    }

    private void beforeValue() {
        if (afterName) {
            afterName = false;
            return;
        }
        if (depth > 0) {
            if (hasValue[depth]) {
                out.append(',');
            }
            hasValue[depth] = true;
        }
    }

    private void quote(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
