package io.watchfanout.ingester.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The bytes of a jetcd {@link ByteSequence} as the protobuf {@link ByteString} it wraps, without
 * copying them: jetcd keeps the {@code ByteString} of the etcd response but offers only
 * {@link ByteSequence#getBytes()}, a copy, which the record would then copy again. Both are
 * immutable, so sharing them is safe. Falls back to copying when this jetcd version has no such
 * field.
 *
 * <p>Stateless and thread-safe.
 */
final class ByteSequences {
    /** jetcd's private {@code ByteSequence.byteString}, or null when it cannot be read. */
    private static final VarHandle BYTE_STRING = byteStringField();

    private ByteSequences() {}

    /** The bytes of {@code bytes}, sharing its storage when possible. */
    static ByteString bytes(ByteSequence bytes) {
        if (BYTE_STRING != null) {
            return (ByteString) BYTE_STRING.get(bytes);
        }
        return ByteString.copyFrom(bytes.getBytes());
    }

    /** Whether {@link #bytes} shares storage (false: it copies). */
    static boolean aliasing() {
        return BYTE_STRING != null;
    }

    private static VarHandle byteStringField() {
        try {
            return MethodHandles.privateLookupIn(ByteSequence.class, MethodHandles.lookup())
                    .findVarHandle(ByteSequence.class, "byteString", ByteString.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
