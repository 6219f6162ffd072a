package io.watchfanout.common;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Percent-encoding of etcd keys, which are arbitrary bytes: the command line and the HTTP
 * API take keys as percent-encoded bytes ({@code %00} is a zero byte), and logs print them
 * the same way.
 *
 * <p>Stateless and thread-safe.
 */
public final class KeyBytes {
    private KeyBytes() {}

    /**
     * Decodes a percent-encoded key: {@code %XX} becomes the byte 0xXX, every other character
     * its UTF-8 bytes. A {@code +} stays a plus sign (keys are not form data).
     *
     * @throws IllegalArgumentException naming the position of a malformed escape
     */
    public static byte[] decode(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length());
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '%') {
                if (i + 2 >= text.length()) {
                    throw malformed(text, i);
                }
                int hi = Character.digit(text.charAt(i + 1), 16);
                int lo = Character.digit(text.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw malformed(text, i);
                }
                out.write((hi << 4) | lo);
                i += 3;
            } else {
                int cp = text.codePointAt(i);
                byte[] utf8 = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
                out.write(utf8, 0, utf8.length);
                i += Character.charCount(cp);
            }
        }
        return out.toByteArray();
    }

    private static IllegalArgumentException malformed(String text, int position) {
        return new IllegalArgumentException(
                "malformed escape at position " + position + " of '" + text + "' (expected: %XX with two hex digits)");
    }

    /**
     * Encodes key bytes for logs and URLs: printable ASCII other than {@code %} as is, every
     * other byte as {@code %XX}.
     */
    public static String encode(byte[] key) {
        StringBuilder sb = new StringBuilder(key.length + 8);
        for (byte b : key) {
            int v = b & 0xff;
            if (v > 0x20 && v < 0x7f && v != '%') {
                sb.append((char) v);
            } else {
                sb.append('%').append(Character.forDigit(v >> 4, 16)).append(Character.forDigit(v & 0xf, 16));
            }
        }
        return sb.toString();
    }
}
