package io.watchfanout.fanout.frame;

import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Builds watch frames through each encoding's {@link FrameFormat} and counts every encode per
 * encoding and {@link FrameKind}. One instance per node; the counters prove invariant 6
 * (serialize once, docs/ARCHITECTURE.md).
 *
 * <p>It also keeps the node's account of memoized frames ({@link #memoizedFrames()},
 * {@link #memoizedBytes()}): frames held by events of the history window, which are released
 * when the events leave it, so that the count follows the window and never a watcher's backlog;
 * and it memoizes the newest revision's bookmark per encoding.
 *
 * <p>Callers {@code duplicate()} a frame before writing it (its position is shared).
 *
 * <p>Thread-safe.
 */
public final class FrameEncoder {
    private final LongAdder[][] encodes = new LongAdder[Encoding.MAX][FrameKind.values().length];
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
     * Encodes the frame of {@code event} of kind {@link FrameKind#EVENT}, {@link FrameKind#ENTERED}
     * or {@link FrameKind#LEFT} and counts it. {@link CachedEvent} memoizes it; the benchmark's
     * encode-per-watcher mode calls it directly.
     */
    public ByteBuffer event(CachedEvent event, Encoding encoding, FrameKind kind) {
        ByteBuffer frame = encoding.format().event(event, kind);
        count(encoding, kind);
        return frame;
    }

    /**
     * An ADDED frame of a key's current state for sendInitialEvents, counted as
     * {@link FrameKind#INITIAL} ({@link CachedEvent#initialFrame} memoizes it while the key's last
     * event is in the window).
     *
     * @param attributes the key-value's attributes, or null
     * @param lastEvent the PUT that wrote {@code kv}, when still in the window, else null
     */
    public ByteBuffer initialEvent(KeyValue kv, ObjectAttributes attributes, CachedEvent lastEvent, Encoding encoding) {
        ByteBuffer frame = encoding.format().initial(kv, attributes, lastEvent);
        count(encoding, FrameKind.INITIAL);
        return frame;
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
            return encodeBookmark(revision, false, encoding);
        }
        return memo.frame(this, encoding);
    }

    /** The BOOKMARK at {@code revision} that closes the initial events (not shared). */
    public ByteBuffer initialEventsEnd(long revision, Encoding encoding) {
        return encodeBookmark(revision, true, encoding);
    }

    /** An ERROR frame carrying {@code status}. */
    public ByteBuffer error(Status status, Encoding encoding) {
        ByteBuffer frame = encoding.format().error(status);
        count(encoding, FrameKind.ERROR);
        return frame;
    }

    private ByteBuffer encodeBookmark(long revision, boolean initialEventsEnd, Encoding encoding) {
        ByteBuffer frame = encoding.format().bookmark(revision, initialEventsEnd);
        count(encoding, FrameKind.BOOKMARK);
        return frame;
    }

    private void count(Encoding encoding, FrameKind kind) {
        encodes[encoding.id()][kind.ordinal()].increment();
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
        return encodes[encoding.id()][kind.ordinal()].sum();
    }

    /** The bookmark frames of one revision, built lazily once per encoding. */
    private static final class BookmarkMemo {
        final long revision;
        private final FrameMemo frames = new FrameMemo();

        BookmarkMemo(long revision) {
            this.revision = revision;
        }

        ByteBuffer frame(FrameEncoder encoder, Encoding encoding) {
            return frames.get(encoding.id(), null, () -> encoder.encodeBookmark(revision, false, encoding));
        }
    }
}
