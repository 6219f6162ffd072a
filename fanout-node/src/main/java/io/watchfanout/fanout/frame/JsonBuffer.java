package io.watchfanout.fanout.frame;

import com.google.protobuf.ByteString;
import java.util.Arrays;

/**
 * A growable byte buffer with the few JSON primitives the canonical proto3 JSON of our
 * messages needs: quoted ASCII names, escaped strings, base64 bytes, decimal numbers.
 * Writing straight to bytes avoids the {@code String}/{@code StringBuilder} round trips
 * (and the ~80 KB of garbage per message) of {@code JsonFormat}.
 *
 * <p>Not thread-safe: one instance per encoding call.
 */
final class JsonBuffer {
    private static final byte[] BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] MIN_LONG =
            Long.toString(Long.MIN_VALUE).getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private byte[] buf;
    private int len;

    JsonBuffer(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    int length() {
        return len;
    }

    byte[] array() {
        return buf;
    }

    private void ensure(int extra) {
        if (len + extra > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + extra));
        }
    }

    JsonBuffer raw(char c) {
        ensure(1);
        buf[len++] = (byte) c;
        return this;
    }

    /** Appends ASCII text that needs no escaping (field names, enum names, literals). */
    JsonBuffer ascii(String s) {
        ensure(s.length());
        for (int i = 0; i < s.length(); i++) {
            buf[len++] = (byte) s.charAt(i);
        }
        return this;
    }

    /** Appends a decimal integer without quotes (proto3 JSON of int32). */
    JsonBuffer number(long v) {
        if (v == Long.MIN_VALUE) {
            ensure(MIN_LONG.length);
            System.arraycopy(MIN_LONG, 0, buf, len, MIN_LONG.length);
            len += MIN_LONG.length;
            return this;
        }
        ensure(20);
        if (v < 0) {
            buf[len++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long t = v; t >= 10; t /= 10) {
            digits++;
        }
        int pos = len + digits;
        len = pos;
        do {
            buf[--pos] = (byte) ('0' + (v % 10));
            v /= 10;
        } while (v != 0);
        return this;
    }

    /** Appends a quoted decimal integer (proto3 JSON of int64). */
    JsonBuffer quotedNumber(long v) {
        raw('"');
        number(v);
        return raw('"');
    }

    /** Appends bytes as a quoted standard base64 string with padding (proto3 JSON of bytes). */
    JsonBuffer base64(ByteString bytes) {
        int n = bytes.size();
        ensure(2 + ((n + 2) / 3) * 4);
        buf[len++] = '"';
        // Read in place (no copy of a 1 KiB value); ByteString.byteAt is an array read.
        ByteString src = bytes;
        int i = 0;
        for (; i + 2 < n; i += 3) {
            int v = (src.byteAt(i) & 0xff) << 16 | (src.byteAt(i + 1) & 0xff) << 8 | (src.byteAt(i + 2) & 0xff);
            buf[len++] = BASE64[v >>> 18];
            buf[len++] = BASE64[(v >>> 12) & 63];
            buf[len++] = BASE64[(v >>> 6) & 63];
            buf[len++] = BASE64[v & 63];
        }
        if (i < n) {
            int v = (src.byteAt(i) & 0xff) << 16 | (i + 1 < n ? (src.byteAt(i + 1) & 0xff) << 8 : 0);
            buf[len++] = BASE64[v >>> 18];
            buf[len++] = BASE64[(v >>> 12) & 63];
            buf[len++] = i + 1 < n ? BASE64[(v >>> 6) & 63] : (byte) '=';
            buf[len++] = '=';
        }
        buf[len++] = '"';
        return this;
    }

    /**
     * Appends a quoted JSON string. Printable ASCII is copied; quotes, backslashes, control
     * and all non-ASCII characters are written as escapes ({@code \\uXXXX}, surrogate pairs
     * as two escapes), so the output is plain ASCII and any Java string round-trips.
     */
    JsonBuffer string(String s) {
        ensure(s.length() + 2);
        buf[len++] = '"';
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
                ensure(1);
                buf[len++] = (byte) c;
            } else if (c == '"' || c == '\\') {
                ensure(2);
                buf[len++] = '\\';
                buf[len++] = (byte) c;
            } else if (c == '\n') {
                ensure(2);
                buf[len++] = '\\';
                buf[len++] = 'n';
            } else {
                ensure(6);
                buf[len++] = '\\';
                buf[len++] = 'u';
                buf[len++] = HEX[(c >>> 12) & 15];
                buf[len++] = HEX[(c >>> 8) & 15];
                buf[len++] = HEX[(c >>> 4) & 15];
                buf[len++] = HEX[c & 15];
            }
        }
        ensure(1);
        buf[len++] = '"';
        return this;
    }
}
