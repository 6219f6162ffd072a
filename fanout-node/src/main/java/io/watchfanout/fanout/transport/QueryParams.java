package io.watchfanout.fanout.transport;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The query string of a request, percent-decoded to raw bytes: etcd keys are arbitrary
 * bytes, and decoding them as UTF-8 text (as servlet-style parameter maps do) would corrupt
 * them: {@code %C3%28} is the two bytes C3 28 (not UTF-8), {@code %00} a zero byte. {@code +}
 * means a space, as in HTML forms, WHATWG {@code URLSearchParams} and Go's
 * {@code url.ParseQuery} (so clients that encode with those get what they meant); send a
 * literal plus as {@code %2B}. (The command line's {@code KeyBytes} keeps {@code +}: a flag
 * is not form data.) A {@code %} without two hex digits, and a raw character that must be
 * percent-encoded ({@code " # < > \ ^ ` { | }}, controls, non-ASCII), are a 400 naming the
 * parameter and its value; {@link RequestTargetRewriter} routes such targets here past
 * Undertow's parser, which would refuse them itself with a bare 400.
 *
 * <p>Public for the front ends mounted on the HTTP port ({@link HttpApi#mount}), which read their
 * parameters with the same decoding and the same 400s.
 *
 * <p>Immutable after parsing; thread-safe.
 */
public final class QueryParams {
    private final Map<String, ByteString> values;

    private QueryParams(Map<String, ByteString> values) {
        this.values = values;
    }

    /**
     * Parses a raw (still percent-encoded) query string.
     *
     * @throws ApiException 400 for bad percent-encoding, a character that must be
     *     percent-encoded, a parameter with an empty name ({@code =x}), or a parameter given twice
     */
    public static QueryParams parse(String rawQuery) throws ApiException {
        Map<String, ByteString> values = new HashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return new QueryParams(values);
        }
        for (String part : rawQuery.split("&", -1)) {
            if (part.isEmpty()) {
                continue;
            }
            int eq = part.indexOf('=');
            String rawName = eq < 0 ? part : part.substring(0, eq);
            String name = decode(rawName, null).toString(StandardCharsets.UTF_8);
            if (name.isEmpty()) {
                // "=x": a value without a name answers no parameter's question. (An empty component,
                // "a&&b", is skipped above, as kube-apiserver skips it.)
                throw new ApiException(HttpStatuses.badRequest(
                        "a parameter with an empty name (\"" + part + "\"; expected: name=value)"));
            }
            ByteString value = eq < 0 ? ByteString.EMPTY : decode(part.substring(eq + 1), name);
            if (values.putIfAbsent(name, value) != null) {
                throw new ApiException(HttpStatuses.badRequest(
                        "parameter " + name + " is given more than once (expected: at most once)"));
            }
        }
        return new QueryParams(values);
    }

    /**
     * Refuses parameters the endpoint does not know, as Kubernetes' API server refuses them: a
     * parameter silently ignored (a {@code labelSelector}, a misspelt {@code resourceVersion}) would
     * answer another question than the one asked.
     *
     * @param endpoint the path, for the message
     * @param known the endpoint's parameters
     * @throws ApiException 400 naming the first unknown parameter and the known ones
     */
    public void only(String endpoint, List<String> known) throws ApiException {
        for (String name : values.keySet()) {
            if (!known.contains(name)) {
                throw new ApiException(HttpStatuses.badRequest("unknown parameter " + name + " for " + endpoint
                        + " (expected: " + String.join(", ", known) + ")"));
            }
        }
    }

    private static ByteString decode(String s, String param) throws ApiException {
        check(param == null ? "parameter name" : "parameter " + param, s);
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '+') {
                out.write(' ');
            } else if (c == '%') {
                out.write(Character.digit(s.charAt(i + 1), 16) << 4 | Character.digit(s.charAt(i + 2), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return ByteString.copyFrom(out.toByteArray());
    }

    /**
     * Checks raw (still percent-encoded) URL text: every {@code %} starts two hex digits, every
     * other character may stand unescaped in a URL.
     *
     * @param what what the text is, for the message, e.g. "parameter key"
     * @throws ApiException 400 naming {@code what}, the value, the position and the fix
     */
    static void check(String what, String raw) throws ApiException {
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length()
                        || !RequestTargetRewriter.isHex(raw.charAt(i + 1))
                        || !RequestTargetRewriter.isHex(raw.charAt(i + 2))) {
                    throw new ApiException(HttpStatuses.badRequest(what + ": \"" + printable(raw)
                            + "\" has a bad percent-encoding at position " + i
                            + " (expected: % followed by two hex digits; a literal % is %25)"));
                }
                i += 2;
            } else if (!RequestTargetRewriter.isAllowedRaw(c)) {
                throw new ApiException(HttpStatuses.badRequest(what + ": \"" + printable(raw) + "\" has the character "
                        + printable(String.valueOf(c)) + " at position " + i
                        + ", which must be percent-encoded (expected: "
                        + percentEncoded(c) + ")"));
            }
        }
    }

    /** URL text for a message: printable ASCII as is, other characters as their %XX bytes. */
    static String printable(String raw) {
        StringBuilder sb = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c > 0x20 && c < 0x7f) {
                sb.append(c);
            } else {
                sb.append(percentEncoded(c));
            }
        }
        return sb.toString();
    }

    /** A character as %XX: its byte when the text came from bytes (<= 0xFF), else its UTF-8 bytes. */
    private static String percentEncoded(char c) {
        byte[] bytes = c <= 0xff ? new byte[] {(byte) c} : String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(String.format("%%%02X", b & 0xff));
        }
        return sb.toString();
    }

    /** The raw bytes of a parameter, or null when absent. */
    public ByteString bytes(String name) {
        return values.get(name);
    }

    /** The parameter as UTF-8 text, or null when absent. */
    public String text(String name) {
        ByteString v = values.get(name);
        return v == null ? null : v.toStringUtf8();
    }

    /**
     * A boolean parameter: {@code true}/{@code false} (any case) or {@code 1}/{@code 0};
     * absent or empty = false.
     */
    public boolean bool(String name) throws ApiException {
        String v = text(name);
        if (v == null || v.isEmpty()) {
            return false;
        }
        if (v.equalsIgnoreCase("true") || v.equals("1")) {
            return true;
        }
        if (v.equalsIgnoreCase("false") || v.equals("0")) {
            return false;
        }
        throw new ApiException(HttpStatuses.badRequest(
                "parameter " + name + ": \"" + v + "\" (expected: true or false in any letter case, or 1 or 0)"));
    }

    /**
     * A non-negative integer parameter; absent or empty = {@code absent}.
     *
     * @param what the meaning, for the error message, e.g. "a revision"
     */
    public long nonNegative(String name, long absent, String what) throws ApiException {
        String v = text(name);
        if (v == null || v.isEmpty()) {
            return absent;
        }
        try {
            long n = Long.parseLong(v);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new ApiException(HttpStatuses.badRequest(
                "parameter " + name + ": \"" + v + "\" (expected: " + what + ", a non-negative integer)"));
    }
}
