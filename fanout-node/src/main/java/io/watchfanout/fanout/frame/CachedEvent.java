package io.watchfanout.fanout.frame;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.Event;
import java.nio.ByteBuffer;

/**
 * One etcd event in the watch cache's history window, with its encoded frames: like
 * Kubernetes' {@code cachingObject}, each frame is built on first need, once per encoding,
 * and every watcher of that encoding gets the same read-only bytes. Unlike Kubernetes, the
 * frames stay with the event for as long as it is in the history window, so replays and
 * initial events reuse them; {@link #release()} drops them when the event leaves the window.
 *
 * <p>Thread-safe. The frames returned are shared: {@code duplicate()} before writing.
 */
public final class CachedEvent {
    private static final int SLOTS_PER_KIND = Encoding.all().length;
    /** The SSE event frame without its id line: a view of the SSE event frame's bytes. */
    private static final int SSE_IN_REVISION_SLOT = 2 * SLOTS_PER_KIND;

    private final Event event;
    private final long appendedAtMillis;
    /**
     * Event frames in slots [0, n), initial-event frames in [n, 2n) (n = encodings), then the
     * id-less view of the SSE event frame.
     */
    private final FrameMemo frames = new FrameMemo(2 * SLOTS_PER_KIND + 1);

    /**
     * @param event the event as read from the events topic
     * @param appendedAtMillis when the event entered the cache, for history expiry by age
     */
    public CachedEvent(Event event, long appendedAtMillis) {
        this.event = event;
        this.appendedAtMillis = appendedAtMillis;
    }

    /** The event as published. */
    public Event event() {
        return event;
    }

    /** The etcd key of the event. */
    public ByteString key() {
        return event.getKv().getKey();
    }

    /** The etcd revision of the event. */
    public long revision() {
        return event.getRevision();
    }

    /** The resource version its frames carry: its revision (every frame of a revision carries it). */
    public long resourceVersion() {
        return event.getRevision();
    }

    /** True for the last event of its revision. */
    public boolean endsRevision() {
        return event.getIndex() == event.getCount() - 1;
    }

    /** When the event entered the cache, milliseconds of the cache's clock. */
    public long appendedAtMillis() {
        return appendedAtMillis;
    }

    /**
     * The event's frame in {@code encoding}, built on first call and shared afterwards, for a
     * watcher that receives no later frame of this revision: in {@link Encoding#SSE} it carries
     * the {@code id:} line that makes the end of the revision the client's resume point.
     */
    public ByteBuffer frame(Encoding encoding, FrameEncoder encoder) {
        int slot = encoding.ordinal();
        if (encoding.isEtcd()) {
            return frames.get(slot, encoder, () -> encoder.encodeEvent(event, encoding));
        }
        return frames.get(
                slot,
                encoder,
                () -> encoder.encode(
                        FrameEncoder.toWatchEvent(event, event.getRevision()),
                        encoding,
                        FrameKind.EVENT,
                        encoding == Encoding.SSE ? frames.peek(Encoding.JSON.ordinal()) : null));
    }

    /**
     * The event's frame for a watcher that receives a later frame of the same revision: the
     * same bytes as {@link #frame}, except that in {@link Encoding#SSE} the {@code id:} line is
     * left out (a shared view of the same buffer, not a second encode), so that a client's
     * {@code Last-Event-ID} never falls inside a revision ({@link SseFrames}).
     */
    public ByteBuffer frameInRevision(Encoding encoding, FrameEncoder encoder) {
        if (encoding != Encoding.SSE) {
            return frame(encoding, encoder);
        }
        return frames.get(SSE_IN_REVISION_SLOT, null, () -> SseFrames.withoutId(frame(encoding, encoder)));
    }

    /**
     * {@link #frame} when {@code lastForWatcher}, else {@link #frameInRevision}.
     *
     * @param lastForWatcher no later frame of this revision goes to the watcher
     */
    public ByteBuffer frame(Encoding encoding, FrameEncoder encoder, boolean lastForWatcher) {
        return lastForWatcher ? frame(encoding, encoder) : frameInRevision(encoding, encoder);
    }

    /**
     * The ADDED frame of this PUT's key-value as an initial event (sendInitialEvents), shared
     * by every initial list that finds the key unchanged since this event.
     *
     * @throws IllegalStateException for a DELETE event
     */
    public ByteBuffer initialFrame(Encoding encoding, FrameEncoder encoder) {
        if (event.getType() != Event.Type.PUT) {
            throw new IllegalStateException("a DELETE event has no initial frame");
        }
        return frames.get(
                SLOTS_PER_KIND + encoding.ordinal(),
                encoder,
                () -> encoder.encode(
                        FrameEncoder.initialWatchEvent(event.getKv()),
                        encoding,
                        FrameKind.INITIAL,
                        encoding == Encoding.SSE ? frames.peek(SLOTS_PER_KIND + Encoding.JSON.ordinal()) : null));
    }

    /** Drops the frames once the event left the history window; later calls build unshared frames. */
    public void release() {
        frames.release();
    }

    @Override
    public String toString() {
        return event.getType() + " rev " + event.getRevision() + " [" + event.getIndex() + "/" + event.getCount() + "]";
    }
}
