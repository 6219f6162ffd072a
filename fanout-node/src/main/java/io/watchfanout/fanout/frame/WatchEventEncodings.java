package io.watchfanout.fanout.frame;

import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.WatchEvent;

/**
 * The encodings of the node's own watch protocol (README.md, "The watch protocol"): frames are
 * the schema's {@code WatchEvent}s, chosen by the request's {@code Accept} header. The HTTP API
 * and in-process front ends use them.
 */
public final class WatchEventEncodings {
    /** One proto3 canonical JSON object of {@code WatchEvent} per line. */
    public static final Encoding JSON =
            Encoding.register("json", "application/json", new WatchEventFormat(WatchEventFormat.Form.JSON));
    /** {@code WatchEvent} messages, each preceded by its varint length (protobuf's delimited format). */
    public static final Encoding PROTOBUF = Encoding.register(
            "protobuf", "application/x-protobuf", new WatchEventFormat(WatchEventFormat.Form.PROTOBUF));
    /**
     * Server-Sent Events: per frame {@code id:} (the resource version, only where resuming is
     * safe, see {@link SseFrames}), {@code event:} (the frame's type) and {@code data:} (the JSON
     * frame without its newline), built from the event's memoized JSON frame when there is one.
     * Only for watch streams.
     */
    public static final Encoding SSE =
            Encoding.register("sse", "text/event-stream", new WatchEventFormat(WatchEventFormat.Form.SSE));

    private WatchEventEncodings() {}

    /**
     * The watch frame of an etcd event, as the README maps it: PUT with {@code kv.version == 1} is
     * ADDED, any other PUT is MODIFIED, DELETE is DELETED with the previous key-value as its
     * object (the bare deleted key when the record has no {@code prev_kv}).
     *
     * @param event an event of the events topic
     * @param resourceVersion the revision a client resumes from after this frame
     */
    public static WatchEvent toWatchEvent(Event event, long resourceVersion) {
        return toWatchEvent(event, resourceVersion, FrameKind.EVENT);
    }

    /**
     * As {@link #toWatchEvent(Event, long)}; {@link FrameKind#ENTERED} is ADDED with the new
     * key-value, {@link FrameKind#LEFT} DELETED with the previous one.
     */
    static WatchEvent toWatchEvent(Event event, long resourceVersion, FrameKind kind) {
        WatchEvent.Builder b = WatchEvent.newBuilder()
                .setResourceVersion(resourceVersion)
                .setIndex(event.getIndex())
                .setCount(event.getCount());
        KeyValue previous = event.hasPrevKv() ? event.getPrevKv() : event.getKv();
        if (kind == FrameKind.LEFT || (kind == FrameKind.EVENT && event.getType() == Event.Type.DELETE)) {
            b.setType(WatchEvent.Type.DELETED).setObject(previous);
        } else if (kind == FrameKind.ENTERED) {
            b.setType(WatchEvent.Type.ADDED).setObject(event.getKv());
        } else {
            b.setType(event.getKv().getVersion() == 1 ? WatchEvent.Type.ADDED : WatchEvent.Type.MODIFIED)
                    .setObject(event.getKv());
        }
        return b.build();
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
}
