package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameFormat;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.ObjectAttributes;
import io.watchfanout.kube.codec.AtRest;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.KubeWatchFrames;
import io.watchfanout.kube.codec.PartialObjectMetadata;
import io.watchfanout.kube.codec.StoredBytes;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;

/**
 * The Kubernetes API's watch encodings, registered with the core ({@link KubeWatchFrames}): JSON
 * lines and client-go's length-prefixed protobuf, each event rendered once per encoding and kind
 * and shared by every watcher. An ADDED or MODIFIED event carries the new object at its mod
 * revision, a DELETED one the object as it was before, at the deletion's revision (kube-apiserver's
 * watch cache does the same), and an object entering or leaving a watcher's selectors is ADDED or
 * DELETED for it. A value the node cannot render (corrupt, CBOR, encrypted) is not skipped: its
 * frame is an ERROR event, a 500 Status naming the key and the reason, and it is counted.
 *
 * <p>A metadata-only watch ({@code as=PartialObjectMetadata}) has encodings of its own, JSON and
 * protobuf, whose events carry the object's {@link PartialObjectMetadata}: made once per event too,
 * and shared by every metadata-only watcher (the garbage collector's, the namespace controller's).
 *
 * <p>Bookmarks depend on the watched kind, so each watch brings its own ({@link KubeBookmarks}).
 */
final class KubeEncodings {
    /** JSON lines ({@code application/json}). */
    static final Encoding JSON = Encoding.register("kube-json", "application/json", new Format(false, false));
    /** client-go's protobuf stream ({@code application/vnd.kubernetes.protobuf;stream=watch}). */
    static final Encoding PROTOBUF = Encoding.register(
            "kube-protobuf", "application/vnd.kubernetes.protobuf;stream=watch", new Format(true, false));
    /** JSON lines of the objects' metadata alone. */
    static final Encoding METADATA_JSON =
            Encoding.register("kube-metadata-json", "application/json", new Format(false, true));
    /** client-go's protobuf stream of the objects' metadata alone. */
    static final Encoding METADATA_PROTOBUF = Encoding.register(
            "kube-metadata-protobuf", "application/vnd.kubernetes.protobuf;stream=watch", new Format(true, true));

    /** Events whose object could not be rendered (sent as an ERROR event instead). */
    static final LongAdder UNDECODABLE = new LongAdder();
    /** JSON events whose object had fields the schema does not know (not written). */
    static final LongAdder UNKNOWN_FIELDS = new LongAdder();

    private static final KubeWatchFrames FRAMES = new KubeWatchFrames(KubeSchema.standard());

    private KubeEncodings() {}

    /** The encoding of a watch asked for in {@code format} (a Table watch is answered in JSON). */
    static Encoding of(KubeFormat format) {
        return switch (format) {
            case PROTOBUF -> PROTOBUF;
            case METADATA_JSON -> METADATA_JSON;
            case METADATA_PROTOBUF -> METADATA_PROTOBUF;
            default -> JSON;
        };
    }

    /** Stateless and thread-safe. */
    private static final class Format implements FrameFormat {
        private final boolean protobuf;
        private final boolean metadata;

        Format(boolean protobuf, boolean metadata) {
            this.protobuf = protobuf;
            this.metadata = metadata;
        }

        @Override
        public ByteBuffer event(CachedEvent event, FrameKind kind) {
            Event e = event.event();
            KubeWatchFrames.EventType type;
            KeyValue object;
            if (kind == FrameKind.LEFT || (kind == FrameKind.EVENT && event.isDelete())) {
                type = KubeWatchFrames.EventType.DELETED;
                if (!e.hasPrevKv()) {
                    return error(e.getKv().getKey().toStringUtf8(), "its deletion record holds no previous value");
                }
                object = e.getPrevKv();
            } else {
                type = kind == FrameKind.ENTERED || e.getKv().getVersion() == 1
                        ? KubeWatchFrames.EventType.ADDED
                        : KubeWatchFrames.EventType.MODIFIED;
                object = e.getKv();
            }
            return render(type, object, event.revision());
        }

        @Override
        public ByteBuffer initial(KeyValue kv, ObjectAttributes attributes, CachedEvent lastEvent) {
            return render(KubeWatchFrames.EventType.ADDED, kv, kv.getModRevision());
        }

        @Override
        public ByteBuffer bookmark(long revision, boolean initialEventsEnd) {
            throw new UnsupportedOperationException("a Kubernetes watch brings its own bookmarks (KubeBookmarks)");
        }

        @Override
        public ByteBuffer error(Status status) {
            return wrap(
                    protobuf
                            ? KubeWatchFrames.protobufError(status.getCode(), status.getReason(), status.getMessage())
                            : KubeWatchFrames.jsonError(status.getCode(), status.getReason(), status.getMessage()));
        }

        private ByteBuffer render(KubeWatchFrames.EventType type, KeyValue kv, long resourceVersion) {
            try {
                StoredBytes value = AtRest.open(kv);
                if (protobuf) {
                    return wrap(
                            metadata
                                    ? KubeWatchFrames.metadataProtobuf(
                                            type, value.array, value.offset, value.length, resourceVersion)
                                    : FRAMES.protobuf(type, value.array, value.offset, value.length, resourceVersion));
                }
                KubeWatchFrames.Frame frame = metadata
                        ? KubeWatchFrames.metadataJson(type, value.array, value.offset, value.length, resourceVersion)
                        : FRAMES.json(type, value.array, value.offset, value.length, resourceVersion);
                if (frame.unknownFields() > 0) {
                    UNKNOWN_FIELDS.increment();
                }
                return wrap(frame.bytes());
            } catch (UndecodableObjectException ex) {
                return error(kv.getKey().toStringUtf8(), ex.getMessage());
            }
        }

        private ByteBuffer error(String key, String why) {
            UNDECODABLE.increment();
            String message = "unable to decode " + key + " as stored in etcd: " + why;
            return wrap(
                    protobuf
                            ? KubeWatchFrames.protobufError(500, "InternalError", message)
                            : KubeWatchFrames.jsonError(500, "InternalError", message));
        }
    }

    /** A read-only direct buffer of {@code bytes}: written to sockets without a per-connection copy. */
    static ByteBuffer wrap(byte[] bytes) {
        ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length);
        direct.put(bytes).flip();
        return direct.asReadOnlyBuffer();
    }
}
