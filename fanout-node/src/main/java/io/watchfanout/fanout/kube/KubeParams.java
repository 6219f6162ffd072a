package io.watchfanout.fanout.kube;

import java.math.BigInteger;

/**
 * Query parameters read as kube-apiserver reads them (k8s.io/apimachinery {@code runtime} and
 * {@code meta/v1} string conversions of {@code ListOptions}), with its error words, so that a
 * client sees the answer kube-apiserver gives: integers through Go's {@code strconv.ParseInt}
 * (an empty or non-decimal value is a 400 {@code strconv.ParseInt: parsing "abc": invalid syntax}),
 * booleans true unless absent, {@code false} or {@code 0} (an empty value is true), and
 * {@code resourceVersion} through {@code strconv.ParseUint}. kube-apiserver answers a
 * resourceVersion it cannot parse with a 500 (kubernetes/kubernetes#139485); this node answers
 * 400 with the same message, as the proposed fix does.
 *
 * <p>Stateless; thread-safe.
 */
final class KubeParams {
    private static final BigInteger MAX_UINT64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    private KubeParams() {}

    /** A boolean parameter: false when absent, {@code false} (any case) or {@code 0}; else true, also when empty. */
    static boolean isTrue(String value) {
        return value != null && !value.equalsIgnoreCase("false") && !value.equals("0");
    }

    /**
     * An int64 parameter, {@code absent} when not given.
     *
     * @throws KubeError 400 BadRequest in Go's words for a value {@code ParseInt} refuses
     */
    static long int64(String text, long absent) throws KubeError {
        if (text == null) {
            return absent;
        }
        if (!isDecimal(text, true)) {
            throw KubeError.badRequest("strconv.ParseInt: parsing " + quote(text) + ": invalid syntax");
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw KubeError.badRequest("strconv.ParseInt: parsing " + quote(text) + ": value out of range");
        }
    }

    /**
     * A {@code resourceVersion}: -1 when absent or empty (unset), else the revision.
     *
     * @throws KubeError 400 BadRequest for a value that is not an unsigned decimal revision, in the
     *     words of kube-apiserver's storage ({@code resourceVersion: Invalid value: "x": strconv.ParseUint: ...})
     */
    static long resourceVersion(String text) throws KubeError {
        if (text == null || text.isEmpty()) {
            return -1;
        }
        String why = null;
        if (!isDecimal(text, false)) {
            why = "strconv.ParseUint: parsing " + quote(text) + ": invalid syntax";
        } else if (new BigInteger(text).compareTo(MAX_UINT64) > 0) {
            why = "strconv.ParseUint: parsing " + quote(text) + ": value out of range";
        } else if (new BigInteger(text).bitLength() > 63) {
            why = "beyond the largest revision etcd can have (an int64)";
        }
        if (why != null) {
            throw KubeError.badRequest("resourceVersion: Invalid value: " + quote(text) + ": " + why);
        }
        return Long.parseLong(text);
    }

    private static boolean isDecimal(String text, boolean signed) {
        int start = signed && !text.isEmpty() && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        if (start == text.length()) {
            return false;
        }
        for (int i = start; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** A value quoted as Go's {@code %q} quotes it: escapes for quotes, backslashes and control characters. */
    static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\t' -> out.append("\\t");
                case '\r' -> out.append("\\r");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        out.append(String.format("\\x%02x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
