package io.watchfanout.fanout.frame;

import com.google.protobuf.CodedOutputStream;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Builds watch frames: maps etcd events to {@code WatchEvent}s (README.md, "The watch protocol", frames) and
 * encodes them into read-only direct buffers, counting every encode per encoding and
 * {@link FrameKind}. One instance per node; the counters prove invariant 6 (serialize once, docs/ARCHITECTURE.md).
 *
 * <p>Server-Sent Events frames are built from the JSON bytes ({@link SseFrames}): from the
 * event's memoized JSON frame when there is one, else from a fresh JSON rendering (which is
 * not counted as a JSON encode: no JSON frame is produced).
 *
 * <p>It also keeps the node's account of memoized frames ({@link #memoizedFrames()},
 * {@link #memoizedBytes()}): frames held by events of the history window, which are released
 * when the events leave it, so that the count follows the window and never a watcher's backlog.
 *
 * <p>Frames are direct buffers so that the socket write of a shared frame needs no
 * per-connection copy into a temporary direct buffer; callers {@code duplicate()} a frame
 * before writing it (its position is shared).
 *
 * <p>Thread-safe.
 */
public final class FrameEncoder {
    private final LongAdder[][] encodes = new LongAdder[Encoding.all().length][FrameKind.values().length];
    private final AtomicReference<BookmarkMemo> bookmark = new AtomicReference<>(new BookmarkMemo(-1));
    private final LongAdder memoizedFrames = new LongAdder();
    private final LongAdder memoizedBytes = new LongAdder();

    /** A new encoder with zeroed counters. */
    public FrameEncoder() {
        for (LongAdder[] row : encodes) {
            for (int i = 0; i < row.length; i++) {
                row[i] = new LongAdder();
            }
        }
    }

    /**
     * The watch frame of an etcd event, as the README maps it: PUT with {@code kv.version == 1} is
     * ADDED, any other PUT is MODIFIED, DELETE is DELETED with the previous key-value as its
     * object (the bare deleted key when the record has no {@code prev_kv}).
     *
     * @param event an event of the events topic
     * @param resourceVersion the revision a client resumes from after this frame
     */
    public static WatchEvent toWatchEvent(Event event, long resourceVersion) {
        WatchEvent.Builder b = WatchEvent.newBuilder()
                .setResourceVersion(resourceVersion)
                .setIndex(event.getIndex())
                .setCount(event.getCount());
        if (event.getType() == Event.Type.DELETE) {
            b.setType(WatchEvent.Type.DELETED).setObject(event.hasPrevKv() ? event.getPrevKv() : event.getKv());
        } else {
            b.setType(event.getKv().getVersion() == 1 ? WatchEvent.Type.ADDED : WatchEvent.Type.MODIFIED)
                    .setObject(event.getKv());
        }
        return b.build();
    }

    /**
     * Encodes one frame and counts it. In {@link Encoding#SSE}, EVENT and BOOKMARK frames carry
     * an {@code id:} line with their resource version, INITIAL and ERROR frames none (see
     * {@link SseFrames} for why).
     *
     * @return a read-only direct buffer at position 0; never modified afterwards
     */
    public ByteBuffer encode(WatchEvent event, Encoding encoding, FrameKind kind) {
        return encode(event, encoding, kind, null);
    }

    /**
     * As {@link #encode(WatchEvent, Encoding, FrameKind)}; an SSE frame is built from
     * {@code jsonFrame}, the event's JSON frame, when given (no second JSON rendering).
     */
    ByteBuffer encode(WatchEvent event, Encoding encoding, FrameKind kind, ByteBuffer jsonFrame) {
        if (encoding.isEtcd()) {
            return etcdFrame(EtcdFrames.of(event, kind), encoding, kind);
        }
        byte[] bytes;
        int length;
        switch (encoding) {
            case JSON:
                JsonBuffer line = ProtoJson.jsonLine(event);
                bytes = line.array();
                length = line.length();
                break;
            case PROTOBUF:
                bytes = delimited(event);
                length = bytes.length;
                break;
            default:
                boolean withId = kind == FrameKind.EVENT || kind == FrameKind.BOOKMARK;
                if (jsonFrame != null) {
                    byte[] json = new byte[jsonFrame.remaining()];
                    jsonFrame.duplicate().get(json);
                    bytes = SseFrames.build(event, withId, json, json.length);
                } else {
                    byte[] json = ProtoJson.toJson(event);
                    bytes = SseFrames.build(event, withId, json, json.length);
                }
                length = bytes.length;
        }
        encodes[encoding.ordinal()][kind.ordinal()].increment();
        ByteBuffer direct = ByteBuffer.allocateDirect(length);
        direct.put(bytes, 0, length).flip();
        return direct.asReadOnlyBuffer();
    }

    /**
     * The frame of one etcd event in {@code encoding}, counted as an EVENT encode: for the etcd API's
     * encodings the {@code events} field of a {@code WatchResponse} (with {@code prev_kv} in
     * {@link Encoding#ETCD_PREV_KV} when the event has one), for the others the event's watch frame.
     * {@link CachedEvent} memoizes it; the benchmark's encode-per-watcher mode calls it directly.
     */
    public ByteBuffer encodeEvent(Event event, Encoding encoding) {
        if (encoding.isEtcd()) {
            return etcdFrame(EtcdFrames.event(event, encoding == Encoding.ETCD_PREV_KV), encoding, FrameKind.EVENT);
        }
        return encode(toWatchEvent(event, event.getRevision()), encoding, FrameKind.EVENT);
    }

    private ByteBuffer etcdFrame(byte[] bytes, Encoding encoding, FrameKind kind) {
        encodes[encoding.ordinal()][kind.ordinal()].increment();
        // A heap buffer: grpc's framer copies a message from its array into the transport buffer.
        return ByteBuffer.wrap(bytes);
    }

    private static byte[] delimited(WatchEvent event) {
        int size = event.getSerializedSize();
        byte[] out = new byte[CodedOutputStream.computeUInt32SizeNoTag(size) + size];
        CodedOutputStream cos = CodedOutputStream.newInstance(out);
        try {
            cos.writeUInt32NoTag(size);
            event.writeTo(cos);
            cos.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException("encoding into an array cannot fail", e);
        }
        return out;
    }

    /**
     * A BOOKMARK frame at {@code revision}. The newest revision's bookmark is memoized per
     * encoding, so that every watcher bookmarked at the same revision gets the same bytes;
     * bookmarks at older revisions (a parked watcher's cursor) are built unshared.
     */
    public ByteBuffer bookmark(long revision, Encoding encoding) {
        BookmarkMemo memo = bookmark.get();
        while (memo.revision < revision) {
            BookmarkMemo next = new BookmarkMemo(revision);
            if (bookmark.compareAndSet(memo, next)) {
                memo = next;
            } else {
                memo = bookmark.get();
            }
        }
        if (memo.revision != revision) {
            return encode(bookmarkEvent(revision, false), encoding, FrameKind.BOOKMARK);
        }
        return memo.frame(this, encoding);
    }

    /** The BOOKMARK at {@code revision} that closes the initial events (not shared). */
    public ByteBuffer initialEventsEnd(long revision, Encoding encoding) {
        return encode(bookmarkEvent(revision, true), encoding, FrameKind.BOOKMARK);
    }

    /** An ADDED frame of a key's current state for sendInitialEvents, not memoized. */
    public ByteBuffer initialEvent(KeyValue kv, Encoding encoding) {
        return encode(initialWatchEvent(kv), encoding, FrameKind.INITIAL);
    }

    /** An ERROR frame carrying {@code status}. */
    public ByteBuffer error(Status status, Encoding encoding) {
        return encode(
                WatchEvent.newBuilder()
                        .setType(WatchEvent.Type.ERROR)
                        .setStatus(status)
                        .build(),
                encoding,
                FrameKind.ERROR);
    }

    /**
     * The initial event of a key: ADDED with its current key-value; like the objects of a
     * Kubernetes watch-list, it carries the key's own mod revision, and the resume point of
     * the initial events is the closing bookmark.
     */
    static WatchEvent initialWatchEvent(KeyValue kv) {
        return WatchEvent.newBuilder()
                .setType(WatchEvent.Type.ADDED)
                .setObject(kv)
                .setResourceVersion(kv.getModRevision())
                .build();
    }

    static WatchEvent bookmarkEvent(long revision, boolean initialEventsEnd) {
        return WatchEvent.newBuilder()
                .setType(WatchEvent.Type.BOOKMARK)
                .setResourceVersion(revision)
                .setInitialEventsEnd(initialEventsEnd)
                .build();
    }

    /** Frames held memoized by events of the history window, all encodings. */
    public long memoizedFrames() {
        return memoizedFrames.sum();
    }

    /** Bytes of the frames held memoized by events of the history window. */
    public long memoizedBytes() {
        return memoizedBytes.sum();
    }

    void memoAdded(ByteBuffer frame) {
        memoizedFrames.increment();
        memoizedBytes.add(frame.capacity());
    }

    void memoReleased(int frames, long bytes) {
        memoizedFrames.add(-frames);
        memoizedBytes.add(-bytes);
    }

    /** Frames encoded so far of this encoding and kind. */
    public long encodes(Encoding encoding, FrameKind kind) {
        return encodes[encoding.ordinal()][kind.ordinal()].sum();
    }

    /** The bookmark frames of one revision, built lazily once per encoding. */
    private static final class BookmarkMemo {
        final long revision;
        private final FrameMemo frames = new FrameMemo(Encoding.all().length);

        BookmarkMemo(long revision) {
            this.revision = revision;
        }

        ByteBuffer frame(FrameEncoder encoder, Encoding encoding) {
            return frames.get(
                    encoding.ordinal(),
                    null,
                    () -> encoder.encode(bookmarkEvent(revision, false), encoding, FrameKind.BOOKMARK));
        }
    }
}
