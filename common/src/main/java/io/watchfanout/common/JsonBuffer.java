package io.watchfanout.common;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable byte buffer with the few JSON primitives the canonical proto3 JSON of our
 * messages needs: quoted ASCII names, escaped strings, base64 bytes, decimal numbers.
 * Writing straight to bytes avoids the {@code String}/{@code StringBuilder} round trips
 * (and the ~80 KB of garbage per message) of {@code JsonFormat}.
 *
 * <p>Shared by the node's watch frames and the Kubernetes codec (which writes its objects into
 * one); nothing here knows either format.
 *
 * <p>Not thread-safe: one instance per encoding call.
 */
public final class JsonBuffer {
    private static final byte[] BASE64 =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MIN_LONG = Long.toString(Long.MIN_VALUE).getBytes(StandardCharsets.US_ASCII);

    private byte[] buf;
    private int len;

    /** Makes an empty buffer of at least {@code initialCapacity} bytes; it grows as needed. */
    public JsonBuffer(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    /** Bytes written so far. */
    public int length() {
        return len;
    }

    /** The backing array: valid from 0 to {@link #length()}, replaced when the buffer grows. */
    public byte[] array() {
        return buf;
    }

    private void ensure(int extra) {
        if (len + extra > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + extra));
        }
    }

    /** Appends one ASCII character as it is (punctuation: braces, commas, colons). */
    public JsonBuffer raw(char c) {
        ensure(1);
        buf[len++] = (byte) c;
        return this;
    }

    /** Appends ASCII text that needs no escaping (field names, enum names, literals). */
    public JsonBuffer ascii(String s) {
        ensure(s.length());
        for (int i = 0; i < s.length(); i++) {
            buf[len++] = (byte) s.charAt(i);
        }
        return this;
    }

    /** Appends a decimal integer without quotes (proto3 JSON of int32). */
    public JsonBuffer number(long v) {
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
    public JsonBuffer quotedNumber(long v) {
        raw('"');
        number(v);
        return raw('"');
    }

    /** Appends bytes as a quoted standard base64 string with padding (proto3 JSON of bytes). */
    public JsonBuffer base64(ByteString bytes) {
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
    public JsonBuffer string(String s) {
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

    /** Forgets what was written; the array is kept for the next use. */
    public void reset() {
        len = 0;
    }

    /** Appends bytes as they are: JSON text made elsewhere (an inline raw JSON value). */
    public JsonBuffer bytes(byte[] src, int off, int n) {
        ensure(n);
        System.arraycopy(src, off, buf, len, n);
        len += n;
        return this;
    }

    /** Appends the remaining bytes of {@code src} as they are, without moving its position. */
    public JsonBuffer bytes(ByteBuffer src) {
        int n = src.remaining();
        ensure(n);
        src.get(src.position(), buf, len, n);
        len += n;
        return this;
    }

    /** Appends {@code n} bytes as a quoted standard base64 string with padding. */
    public JsonBuffer base64(byte[] src, int off, int n) {
        return base64(UnsafeByteOperations.unsafeWrap(src, off, n));
    }

    /**
     * Appends UTF-8 text as a quoted JSON string without decoding it: bytes of 0x80 and above
     * (multi-byte UTF-8 sequences) are copied as they are, which JSON in UTF-8 allows; quotes,
     * backslashes and control characters are escaped.
     */
    public JsonBuffer utf8String(byte[] src, int off, int n) {
        ensure(n + 2);
        buf[len++] = '"';
        for (int i = off, end = off + n; i < end; i++) {
            byte b = src[i];
            if (b == '"' || b == '\\') {
                ensure(2 + end - i);
                buf[len++] = '\\';
                buf[len++] = b;
            } else if (b >= 0 && b < 0x20) {
                ensure(6 + end - i);
                buf[len++] = '\\';
                buf[len++] = 'u';
                buf[len++] = '0';
                buf[len++] = '0';
                buf[len++] = HEX[(b >>> 4) & 15];
                buf[len++] = HEX[b & 15];
            } else {
                buf[len++] = b;
            }
        }
        ensure(1);
        buf[len++] = '"';
        return this;
    }
}
