package io.watchfanout.kube.codec;

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
public final class ProtoReader {
    /** Wire type of int32, int64, uint32, uint64, sint32, sint64, bool and enum fields. */
    public static final int VARINT = 0;
    /** Wire type of fixed64, sfixed64 and double fields. */
    public static final int FIXED64 = 1;
    /** Wire type of string, bytes, embedded message and packed repeated fields. */
    public static final int LENGTH_DELIMITED = 2;
    /** Wire type of a (deprecated) group's start. */
    public static final int START_GROUP = 3;
    /** Wire type of a (deprecated) group's end. */
    public static final int END_GROUP = 4;
    /** Wire type of fixed32, sfixed32 and float fields. */
    public static final int FIXED32 = 5;

    /** Bytes that do not form a valid protobuf message. */
    public static final class MalformedException extends Exception {
        private static final long serialVersionUID = 1L;

        MalformedException(String message) {
            super(message, null, false, false);
        }
    }

    private byte[] buf;
    private int pos;
    private int end;

    /** A reader of the message in {@code buf[start, end)}; the bytes are read, never written. */
    public ProtoReader(byte[] buf, int start, int end) {
        this.buf = buf;
        this.pos = start;
        this.end = end;
    }

    /** Points this reader at {@code buf[start, end)}, for a walk that reuses one reader per message. */
    public ProtoReader reset(byte[] buf, int start, int end) {
        this.buf = buf;
        this.pos = start;
        this.end = end;
        return this;
    }

    /** Whether bytes are left before the end of the range. */
    public boolean hasMore() {
        return pos < end;
    }

    /** The offset in {@link #buffer()} of the next byte to read. */
    public int position() {
        return pos;
    }

    /** The offset in {@link #buffer()} where the range ends (exclusive). */
    public int end() {
        return end;
    }

    /** The array read (shared, never written). */
    public byte[] buffer() {
        return buf;
    }

    /** The next field's tag: its number shifted left by 3, or'd with its wire type. */
    public int readTag() throws MalformedException {
        long tag = readVarint();
        if (tag <= 0 || tag > Integer.MAX_VALUE || (tag >>> 3) == 0) {
            throw new MalformedException("invalid tag " + tag + " at offset " + pos);
        }
        return (int) tag;
    }

    /** A varint value (at most 10 bytes). */
    public long readVarint() throws MalformedException {
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

    /** A length-delimited field's length, checked against the bytes left. */
    public int readLength() throws MalformedException {
        long length = readVarint();
        if (length < 0 || length > end - pos) {
            throw new MalformedException("length " + length + " past the end at offset " + pos);
        }
        return (int) length;
    }

    /** A little-endian 64-bit value. */
    public long readFixed64() throws MalformedException {
        need(8);
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (buf[pos + i] & 0xff);
        }
        pos += 8;
        return v;
    }

    /** A little-endian 32-bit value. */
    public int readFixed32() throws MalformedException {
        need(4);
        int v = (buf[pos] & 0xff)
                | (buf[pos + 1] & 0xff) << 8
                | (buf[pos + 2] & 0xff) << 16
                | (buf[pos + 3] & 0xff) << 24;
        pos += 4;
        return v;
    }

    /** A length-delimited field's bytes as UTF-8 text. */
    public String readString() throws MalformedException {
        int length = readLength();
        String s = new String(buf, pos, length, StandardCharsets.UTF_8);
        pos += length;
        return s;
    }

    /** A length-delimited field's bytes, copied. */
    public byte[] readBytes() throws MalformedException {
        int length = readLength();
        byte[] b = Arrays.copyOfRange(buf, pos, pos + length);
        pos += length;
        return b;
    }

    /** A reader of the next {@code length} bytes; this reader moves past them. */
    public ProtoReader sub(int length) throws MalformedException {
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
    public ProtoReader lastMessage(int number) throws MalformedException {
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

    /** Moves past {@code length} bytes. */
    public void skipBytes(int length) throws MalformedException {
        need(length);
        pos += length;
    }

    /** Skips the value of a field whose tag was just read. */
    public void skip(int tag) throws MalformedException {
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
