package io.watchfanout.ingester.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.impl.AbstractResponse;
import io.etcd.jetcd.watch.WatchResponse;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What jetcd holds but does not hand out, read without copying: the protobuf {@link ByteString}
 * inside a {@link ByteSequence} (jetcd offers only {@link ByteSequence#getBytes()}, a copy, which
 * a record would then copy again), and etcd's own gRPC message behind a {@link WatchResponse}
 * (jetcd converts each event into objects of its own on {@link WatchResponse#getEvents()}, every
 * key and value wrapped and hashed in full by {@code ByteSequence}'s constructor, which the
 * ingester would then convert again). Both are immutable, so sharing them is safe. Where this
 * jetcd version lacks a field, the callers fall back to jetcd's public API.
 *
 * <p>Stateless and thread-safe.
 */
final class JetcdInternals {
    /** jetcd's private {@code ByteSequence.byteString}, or null when it cannot be read. */
    private static final VarHandle BYTE_STRING = field(ByteSequence.class, "byteString", ByteString.class);
    /** jetcd's private {@code AbstractResponse.response}, or null when it cannot be read. */
    private static final VarHandle RESPONSE = field(AbstractResponse.class, "response", Object.class);

    private JetcdInternals() {}

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

    /** The gRPC message of {@code response}, or null when this jetcd version does not let it be read. */
    static io.etcd.jetcd.api.WatchResponse raw(WatchResponse response) {
        if (RESPONSE == null) {
            return null;
        }
        Object raw = RESPONSE.get((AbstractResponse<?>) response);
        return raw instanceof io.etcd.jetcd.api.WatchResponse r ? r : null;
    }

    private static VarHandle field(Class<?> owner, String name, Class<?> type) {
        try {
            return MethodHandles.privateLookupIn(owner, MethodHandles.lookup()).findVarHandle(owner, name, type);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
