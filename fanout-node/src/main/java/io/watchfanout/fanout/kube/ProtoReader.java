package io.watchfanout.fanout.kube;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A reader of the protobuf wire format over a range of a byte array, with absolute positions,
 * so that a caller can note where a field lies and copy or splice it later without decoding it
 * (a stored object's bytes are rendered and re-framed, never parsed into messages).
 *
 * <p>Not thread-safe: one instance per read. Every read checks its bounds and throws
 * {@link MalformedException} rather than reading past the range.
 */
final class ProtoReader {
    static final int VARINT = 0;
    static final int FIXED64 = 1;
    static final int LENGTH_DELIMITED = 2;
    static final int START_GROUP = 3;
    static final int END_GROUP = 4;
    static final int FIXED32 = 5;

    /** Bytes that do not form a valid protobuf message. */
    static final class MalformedException extends Exception {
        private static final long serialVersionUID = 1L;

        MalformedException(String message) {
            super(message, null, false, false);
        }
    }

    private byte[] buf;
    private int pos;
    private int end;

    ProtoReader(byte[] buf, int start, int end) {
        this.buf = buf;
        this.pos = start;
        this.end = end;
    }

    /** Points this reader at {@code buf[start, end)}, for a walk that reuses one reader per message. */
    ProtoReader reset(byte[] buf, int start, int end) {
        this.buf = buf;
        this.pos = start;
        this.end = end;
        return this;
    }

    boolean hasMore() {
        return pos < end;
    }

    int position() {
        return pos;
    }

    int end() {
        return end;
    }

    byte[] buffer() {
        return buf;
    }

    int readTag() throws MalformedException {
        long tag = readVarint();
        if (tag <= 0 || tag > Integer.MAX_VALUE || (tag >>> 3) == 0) {
            throw new MalformedException("invalid tag " + tag + " at offset " + pos);
        }
        return (int) tag;
    }

    long readVarint() throws MalformedException {
        long result = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= end) {
                throw new MalformedException("truncated varint at offset " + pos);
            }
            byte b = buf[pos++];
            result |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return result;
            }
        }
        throw new MalformedException("varint longer than 10 bytes at offset " + pos);
    }

    int readLength() throws MalformedException {
        long length = readVarint();
        if (length < 0 || length > end - pos) {
            throw new MalformedException("length " + length + " past the end at offset " + pos);
        }
        return (int) length;
    }

    long readFixed64() throws MalformedException {
        need(8);
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (buf[pos + i] & 0xff);
        }
        pos += 8;
        return v;
    }

    int readFixed32() throws MalformedException {
        need(4);
        int v = (buf[pos] & 0xff)
                | (buf[pos + 1] & 0xff) << 8
                | (buf[pos + 2] & 0xff) << 16
                | (buf[pos + 3] & 0xff) << 24;
        pos += 4;
        return v;
    }

    String readString() throws MalformedException {
        int length = readLength();
        String s = new String(buf, pos, length, StandardCharsets.UTF_8);
        pos += length;
        return s;
    }

    /** A length-delimited field's bytes, copied. */
    byte[] readBytes() throws MalformedException {
        int length = readLength();
        byte[] b = Arrays.copyOfRange(buf, pos, pos + length);
        pos += length;
        return b;
    }

    /** A reader of the next {@code length} bytes; this reader moves past them. */
    ProtoReader sub(int length) throws MalformedException {
        need(length);
        ProtoReader sub = new ProtoReader(buf, pos, pos + length);
        pos += length;
        return sub;
    }

    /**
     * The last length-delimited field {@code number} of the rest of this message as a reader of its
     * bytes (for a message field, what protobuf's last-one-wins reading keeps), or null when there
     * is none; this reader moves to its end.
     */
    ProtoReader lastMessage(int number) throws MalformedException {
        ProtoReader found = null;
        while (hasMore()) {
            int tag = readTag();
            if (tag == (number << 3 | LENGTH_DELIMITED)) {
                found = sub(readLength());
            } else {
                skip(tag);
            }
        }
        return found;
    }

    void skipBytes(int length) throws MalformedException {
        need(length);
        pos += length;
    }

    /** Skips the value of a field whose tag was just read. */
    void skip(int tag) throws MalformedException {
        switch (tag & 7) {
            case VARINT -> readVarint();
            case FIXED64 -> skipBytes(8);
            case LENGTH_DELIMITED -> skipBytes(readLength());
            case FIXED32 -> skipBytes(4);
            case START_GROUP -> {
                int field = tag >>> 3;
                while (true) {
                    if (!hasMore()) {
                        throw new MalformedException("unterminated group " + field);
                    }
                    int t = readTag();
                    if ((t & 7) == END_GROUP) {
                        if ((t >>> 3) != field) {
                            throw new MalformedException("mismatched end of group " + field);
                        }
                        return;
                    }
                    skip(t);
                }
            }
            default -> throw new MalformedException("invalid wire type " + (tag & 7) + " at offset " + pos);
        }
    }

    private void need(int n) throws MalformedException {
        if (n < 0 || n > end - pos) {
            throw new MalformedException(n + " bytes past the end at offset " + pos);
        }
    }
}
