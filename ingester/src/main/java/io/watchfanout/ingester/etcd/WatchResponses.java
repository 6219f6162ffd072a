package io.watchfanout.ingester.etcd;

import io.etcd.jetcd.impl.AbstractResponse;
import io.etcd.jetcd.watch.WatchResponse;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * etcd's own watch response (the gRPC message) behind a jetcd {@link WatchResponse}. jetcd
 * converts each event into objects of its own on {@link WatchResponse#getEvents()}: every key and
 * value wrapped and hashed in full ({@code ByteSequence}'s constructor), which the ingester then
 * converts again; reading the message jetcd received skips that. Without access to it (another
 * jetcd version) the caller uses {@code getEvents()}.
 *
 * <p>Stateless and thread-safe.
 */
final class WatchResponses {
    /** jetcd's private {@code AbstractResponse.response}, or null when it cannot be read. */
    private static final VarHandle RESPONSE = responseField();

    private WatchResponses() {}

    /** The gRPC message of {@code response}, or null when this jetcd version does not let it be read. */
    static io.etcd.jetcd.api.WatchResponse raw(WatchResponse response) {
        if (RESPONSE == null) {
            return null;
        }
        Object raw = RESPONSE.get((AbstractResponse<?>) response);
        return raw instanceof io.etcd.jetcd.api.WatchResponse r ? r : null;
    }

    private static VarHandle responseField() {
        try {
            return MethodHandles.privateLookupIn(AbstractResponse.class, MethodHandles.lookup())
                    .findVarHandle(AbstractResponse.class, "response", Object.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
