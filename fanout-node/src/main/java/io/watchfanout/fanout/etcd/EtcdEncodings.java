package io.watchfanout.fanout.etcd;

import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameFormat;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.ObjectAttributes;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;

/**
 * The etcd API's encodings ({@code etcdserverpb.Watch}), registered with the core: an event frame
 * is the {@code events} field (11) of a {@code WatchResponse} holding one {@code mvccpb.Event}; a
 * response is the watcher's own header fields followed by the shared event frames (protobuf
 * messages concatenate field by field). A BOOKMARK frame is the {@code header} field (1) with only
 * the revision (a progress notification); an ERROR frame is {@code canceled} (4) with
 * {@code cancel_reason} (6). Frames are heap buffers, since grpc copies message bytes into its
 * transport buffers from arrays ({@link EtcdFrames}).
 */
public final class EtcdEncodings {
    /** Events without {@code prev_kv}. */
    public static final Encoding ETCD = Encoding.register("etcd", "application/grpc", new Format(false));
    /** Events with {@code prev_kv} when the record has one (a watch created with {@code prev_kv}). */
    public static final Encoding ETCD_PREV_KV = Encoding.register("etcd_prev_kv", "application/grpc", new Format(true));

    private EtcdEncodings() {}

    /** Stateless and thread-safe. */
    private static final class Format implements FrameFormat {
        private final boolean withPrevKv;

        Format(boolean withPrevKv) {
            this.withPrevKv = withPrevKv;
        }

        @Override
        public ByteBuffer event(CachedEvent event, FrameKind kind) {
            if (kind != FrameKind.EVENT) {
                throw new UnsupportedOperationException("the etcd API has no selectors, so no " + kind + " frames");
            }
            return ByteBuffer.wrap(EtcdFrames.event(event.event(), withPrevKv));
        }

        @Override
        public ByteBuffer initial(KeyValue kv, ObjectAttributes attributes, CachedEvent lastEvent) {
            throw new UnsupportedOperationException("the etcd API has no initial events");
        }

        @Override
        public ByteBuffer bookmark(long revision, boolean initialEventsEnd) {
            return ByteBuffer.wrap(EtcdFrames.header(revision));
        }

        @Override
        public ByteBuffer error(Status status) {
            return ByteBuffer.wrap(EtcdFrames.canceled(status.getMessage()));
        }
    }
}
