package io.watchfanout.fanout.frame;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.Event;
import java.nio.ByteBuffer;

/**
 * One etcd event in the watch cache's history window, with its encoded frames and its objects'
 * attributes: like Kubernetes' {@code cachingObject}, each frame is built on first need, once
 * per encoding and kind, and every watcher of that encoding gets the same read-only bytes.
 * Unlike Kubernetes, the frames stay with the event for as long as it is in the history window,
 * so replays and initial events reuse them; {@link #release()} drops them when the event leaves
 * the window.
 *
 * <p>Memo slots are numbered by the encoding's {@link Encoding#id()} and the kind: event,
 * entered, left, initial, and the in-revision view of the event frame.
 *
 * <p>Thread-safe. The frames returned are shared: {@code duplicate()} before writing.
 */
public final class CachedEvent {
    private static final int SLOT_EVENT = 0;
    private static final int SLOT_ENTERED = 1;
    private static final int SLOT_LEFT = 2;
    private static final int SLOT_INITIAL = 3;
    private static final int SLOT_IN_REVISION = 4;
    private static final int SLOTS_PER_ENCODING = 5;

    private final Event event;
    private final long appendedAtMillis;
    private final FrameMemo frames = new FrameMemo();
    /**
     * The extractor to compute the attributes with on first need ({@link #attribute}), until
     * {@link #attributed}.
     */
    private volatile AttributeExtractor pending;
    /** Set once the attributes are known (computed, or given); they never change after. */
    private volatile boolean attributed;

    private ObjectAttributes attributes;
    private ObjectAttributes prevAttributes;

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

    /** True for a DELETE. */
    public boolean isDelete() {
        return event.getType() == Event.Type.DELETE;
    }

    /** When the event entered the cache, milliseconds of the cache's clock. */
    public long appendedAtMillis() {
        return appendedAtMillis;
    }

    /**
     * Gives the event {@code extractor} to compute the attributes of the new object and of the
     * previous one with, on first need ({@link #attributes()}, {@link #prevAttributes()}): once,
     * both values at a time, whichever thread asks first; never when nothing asks (no watcher
     * selects by attributes or is indexed, and no format reads them). Cheap (a field write);
     * ignored once the attributes are known. The core calls it for every event it hands to
     * watchers when a front end registered an extractor.
     */
    public void attribute(AttributeExtractor extractor) {
        if (!attributed && pending == null) {
            pending = extractor;
        }
    }

    /**
     * Sets the attributes computed by the front end's extractor for the new object and the
     * previous one (the dispatcher computes them before taking its lock when a watcher needs
     * them); ignored once known.
     */
    public void attribute(ObjectAttributes now, ObjectAttributes before) {
        synchronized (this) {
            if (!attributed) {
                attributes = now;
                prevAttributes = before;
                attributed = true;
                pending = null;
            }
        }
    }

    /**
     * The new object's attributes, computed now if this is the first need: null for a DELETE,
     * without an extractor ({@link #attribute}), or for a key the front end does not serve.
     */
    public ObjectAttributes attributes() {
        return known() ? attributes : null;
    }

    /** The previous object's attributes (from the event's {@code prev_kv}), or null as {@link #attributes()}. */
    public ObjectAttributes prevAttributes() {
        return known() ? prevAttributes : null;
    }

    /** True once the attributes are known, computing them with the pending extractor if there is one. */
    private boolean known() {
        if (attributed) {
            return true;
        }
        if (pending == null) {
            return false;
        }
        synchronized (this) {
            AttributeExtractor x = pending;
            if (!attributed && x != null) {
                attributes = isDelete() ? null : x.extract(event.getKv());
                prevAttributes = event.hasPrevKv() ? x.extract(event.getPrevKv()) : null;
                attributed = true;
                pending = null;
            }
            return attributed;
        }
    }

    /**
     * The event's frame in {@code encoding}, built on first call and shared afterwards, for a
     * watcher that receives no later frame of this revision.
     */
    public ByteBuffer frame(Encoding encoding, FrameEncoder encoder) {
        return frames.get(slot(encoding, SLOT_EVENT), encoder, () -> encoder.event(this, encoding, FrameKind.EVENT));
    }

    /**
     * The event's frame for a watcher that receives a later frame of the same revision: the
     * same bytes as {@link #frame}, or a shared view of them without what would name a resume
     * point inside the revision ({@link FrameFormat#inRevision}; not a second encode).
     */
    public ByteBuffer frameInRevision(Encoding encoding, FrameEncoder encoder) {
        if (!encoding.format().hasInRevisionForm()) {
            return frame(encoding, encoder);
        }
        return frames.get(
                slot(encoding, SLOT_IN_REVISION), null, () -> encoding.format().inRevision(frame(encoding, encoder)));
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
     * The frame of kind {@code kind} ({@link FrameKind#EVENT}, {@link FrameKind#ENTERED} or
     * {@link FrameKind#LEFT}), memoized as {@link #frame}.
     *
     * @param lastForWatcher no later frame of this revision goes to the watcher
     */
    public ByteBuffer frame(Encoding encoding, FrameKind kind, FrameEncoder encoder, boolean lastForWatcher) {
        if (kind == FrameKind.EVENT) {
            return frame(encoding, encoder, lastForWatcher);
        }
        int slot;
        if (kind == FrameKind.ENTERED) {
            slot = SLOT_ENTERED;
        } else if (kind == FrameKind.LEFT) {
            slot = SLOT_LEFT;
        } else {
            throw new IllegalArgumentException("not an event kind: " + kind);
        }
        ByteBuffer frame = frames.get(slot(encoding, slot), encoder, () -> encoder.event(this, encoding, kind));
        // Rare (a selector and a multi-event revision): the view is not memoized.
        return lastForWatcher ? frame : encoding.format().inRevision(frame);
    }

    /**
     * The ADDED frame of this PUT's key-value as an initial event (sendInitialEvents), shared
     * by every initial list that finds the key unchanged since this event.
     *
     * @throws IllegalStateException for a DELETE event
     */
    public ByteBuffer initialFrame(Encoding encoding, FrameEncoder encoder) {
        if (isDelete()) {
            throw new IllegalStateException("a DELETE event has no initial frame");
        }
        return frames.get(
                slot(encoding, SLOT_INITIAL),
                encoder,
                // The attributes if a selecting watcher needed them already; a format that needs
                // them for every key asks this event (lastEvent) for them.
                () -> encoder.initialEvent(event.getKv(), attributed ? attributes : null, this, encoding));
    }

    /**
     * The frame of kind {@code kind} in {@code encoding} if it was built and is still held, else
     * null: for a format that derives its frames from another encoding's bytes.
     *
     * @param kind {@link FrameKind#EVENT}, {@link FrameKind#ENTERED}, {@link FrameKind#LEFT} or
     *     {@link FrameKind#INITIAL}
     */
    public ByteBuffer peek(Encoding encoding, FrameKind kind) {
        int slot;
        switch (kind) {
            case EVENT:
                slot = SLOT_EVENT;
                break;
            case ENTERED:
                slot = SLOT_ENTERED;
                break;
            case LEFT:
                slot = SLOT_LEFT;
                break;
            case INITIAL:
                slot = SLOT_INITIAL;
                break;
            default:
                return null;
        }
        return frames.peek(slot(encoding, slot));
    }

    private static int slot(Encoding encoding, int kindSlot) {
        return encoding.id() * SLOTS_PER_ENCODING + kindSlot;
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
