package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import java.util.Arrays;

/**
 * The timestamp the load generator writes at the start of each value: {@code System.nanoTime()}
 * as 8 bytes big-endian. The load generator and the watch clients run in the same JVM, so the
 * put→frame latency is one monotonic clock's difference. In a JSON frame the value is base64:
 * its first 12 characters decode to the first 9 bytes, which hold the stamp.
 */
final class LatencyStamp {
    private static final int[] BASE64 = new int[128];

    static {
        Arrays.fill(BASE64, -1);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int i = 0; i < alphabet.length(); i++) {
            BASE64[alphabet.charAt(i)] = i;
        }
    }

    private LatencyStamp() {}

    /** A value of {@code size >= 8} bytes: the stamp, then the filler. */
    static ByteString value(long nanoTime, byte[] filler) {
        byte[] v = filler.clone();
        for (int i = 0; i < 8; i++) {
            v[i] = (byte) (nanoTime >>> (56 - 8 * i));
        }
        return ByteString.copyFrom(v);
    }

    /** The stamp in raw value bytes, or -1 when too short. */
    static long fromBytes(ByteString value) {
        if (value.size() < 8) {
            return -1;
        }
        long t = 0;
        for (int i = 0; i < 8; i++) {
            t = (t << 8) | (value.byteAt(i) & 0xff);
        }
        return t;
    }

    /** The stamp from 12 base64 characters at {@code b[off..off+12)}, or -1 if they are not base64. */
    static long fromBase64(byte[] b, int off) {
        long t = 0;
        int bytes = 0;
        for (int g = 0; g < 3; g++) {
            int acc = 0;
            for (int j = 0; j < 4; j++) {
                int c = b[off + 4 * g + j];
                int d = c >= 0 && c < 128 ? BASE64[c] : -1;
                if (d < 0) {
                    return -1;
                }
                acc = (acc << 6) | d;
            }
            for (int k = 2; k >= 0 && bytes < 8; k--) {
                t = (t << 8) | ((acc >>> (8 * k)) & 0xff);
                bytes++;
            }
        }
        return t;
    }
}
