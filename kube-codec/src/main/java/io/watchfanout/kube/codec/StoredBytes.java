package io.watchfanout.kube.codec;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * The bytes of a stored value as {@code array[offset, offset + length)} without copying them: the
 * cache keeps values as views into large shared chunks, and the object readers and writers of this
 * package take an array and bounds. A value that is not one contiguous array (a rope, a buffer) is
 * copied once. The array must never be written: it is the cache's.
 *
 * <p>Immutable once made; thread-safe.
 */
public final class StoredBytes {
    /** The array holding the bytes: the cache's own, never to be written. */
    public final byte[] array;
    /** Where the bytes start in {@link #array}. */
    public final int offset;
    /** How many bytes there are. */
    public final int length;

    private StoredBytes(byte[] array, int offset, int length) {
        this.array = array;
        this.offset = offset;
        this.length = length;
    }

    /** A read-only view of {@code value}'s bytes (a copy only if they are not in one array). */
    public static StoredBytes of(ByteString value) {
        if (value.isEmpty()) {
            return new StoredBytes(new byte[0], 0, 0);
        }
        Unwrap u = new Unwrap();
        try {
            UnsafeByteOperations.unsafeWriteTo(value, u);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // Unwrap does no I/O
        }
        if (u.array == null || u.pieces != 1 || u.length != value.size()) {
            byte[] copy = value.toByteArray();
            return new StoredBytes(copy, 0, copy.length);
        }
        return new StoredBytes(u.array, u.offset, u.length);
    }

    /** A whole array's bytes (a decrypted value, made for this reader). */
    public static StoredBytes of(byte[] array) {
        return new StoredBytes(array, 0, array.length);
    }

    /** Whether the bytes begin with {@code prefix}. */
    public boolean startsWith(ByteString prefix) {
        if (length < prefix.size()) {
            return false;
        }
        for (int i = 0; i < prefix.size(); i++) {
            if (array[offset + i] != prefix.byteAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** The bytes in an array of their own (for the few readers that take a whole array). */
    public byte[] copy() {
        byte[] out = new byte[length];
        System.arraycopy(array, offset, out, 0, length);
        return out;
    }

    /** Receives the value's backing array when protobuf hands it over without a copy. */
    private static final class Unwrap extends ByteOutput {
        byte[] array;
        int offset;
        int length;
        int pieces;

        @Override
        public void writeLazy(byte[] value, int offset, int length) {
            pieces++;
            this.array = value;
            this.offset = offset;
            this.length = length;
        }

        @Override
        public void write(byte value) {
            pieces = 2; // not one array: copy
        }

        @Override
        public void write(byte[] value, int offset, int length) {
            pieces = 2;
        }

        @Override
        public void write(ByteBuffer value) {
            pieces = 2;
        }

        @Override
        public void writeLazy(ByteBuffer value) {
            pieces = 2;
        }
    }
}
