package io.watchfanout.fanout.frame;

import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;

/**
 * How one {@link Encoding} writes frames: a front end's wire form of watch events, initial
 * events, bookmarks and errors. The core calls it at most once per event and kind and memoizes
 * the result ({@link CachedEvent}), so a format is called per event, never per watcher.
 *
 * <p>Every method returns a read-only buffer at position 0 that is never modified afterwards
 * (shared by every watcher of the encoding: they {@code duplicate()} it). Implementations are
 * stateless and thread-safe; a format that needs per-node knowledge (e.g. which resource a key
 * is) reads it from the event's {@link ObjectAttributes} ({@link CachedEvent#attributes()}),
 * which its front end's {@link AttributeExtractor} computes once per event, on first need.
 */
public interface FrameFormat {
    /**
     * The frame of {@code event} of kind {@link FrameKind#EVENT} (as it happened),
     * {@link FrameKind#ENTERED} or {@link FrameKind#LEFT} (as a watcher with a selector sees it).
     * A format may reuse another encoding's memoized frame ({@link CachedEvent#peek}).
     *
     * @throws UnsupportedOperationException for a kind its front end never asks for
     */
    ByteBuffer event(CachedEvent event, FrameKind kind);

    /**
     * The ADDED frame of a key's current state, sent as an initial event (sendInitialEvents).
     *
     * @param attributes the key-value's attributes when a watcher selecting by them had them
     *     computed, else null (a format that needs them asks {@code lastEvent}, or its extractor)
     * @param lastEvent the PUT that wrote {@code kv} while it is in the history window, else null
     * @throws UnsupportedOperationException when its front end has no initial events
     */
    ByteBuffer initial(KeyValue kv, ObjectAttributes attributes, CachedEvent lastEvent);

    /**
     * A BOOKMARK at {@code revision}.
     *
     * @param initialEventsEnd true for the bookmark that closes the initial events
     */
    ByteBuffer bookmark(long revision, boolean initialEventsEnd);

    /** The frame that ends a stream with {@code status} (the core's error, in the node's schema). */
    ByteBuffer error(Status status);

    /**
     * {@code eventFrame} for a watcher that receives a later frame of the same revision: the
     * frame itself, or a view of its bytes without what would name a resume point inside the
     * revision (the SSE {@code id:} line). Must not encode.
     */
    default ByteBuffer inRevision(ByteBuffer eventFrame) {
        return eventFrame;
    }

    /** True when {@link #inRevision} may differ from the frame, so that the core memoizes the view. */
    default boolean hasInRevisionForm() {
        return false;
    }
}
