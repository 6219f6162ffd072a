package io.watchfanout.fanout.frame;

/**
 * A wire encoding of watch frames and list answers, chosen by the request's {@code Accept}
 * header (README.md, "The watch protocol").
 */
public enum Encoding {
    /** One proto3 canonical JSON object of {@code WatchEvent} per line. */
    JSON("application/json"),
    /** {@code WatchEvent} messages, each preceded by its varint length (protobuf's delimited format). */
    PROTOBUF("application/x-protobuf"),
    /**
     * Server-Sent Events: per frame {@code id:} (the resource version, only where resuming is
     * safe, see {@link SseFrames}), {@code event:} (the frame's type) and {@code data:} (the JSON
     * frame without its newline). Only for watch streams.
     */
    SSE("text/event-stream"),
    /**
     * etcd's v3 API ({@code etcdserverpb.Watch}): an event frame is the {@code events} field (11) of a
     * {@code WatchResponse} holding one {@code mvccpb.Event} without {@code prev_kv}; a response is the
     * watcher's own header fields followed by the shared event frames (protobuf messages concatenate
     * field by field). A BOOKMARK frame is the {@code header} field (1) with only the revision (a
     * progress notification); an ERROR frame is {@code canceled} (4) with {@code cancel_reason} (6).
     * Frames are heap buffers, since grpc copies message bytes into its transport buffers from arrays.
     */
    ETCD("application/grpc"),
    /** As {@link #ETCD}, with each event's {@code prev_kv} (a watch created with {@code prev_kv}). */
    ETCD_PREV_KV("application/grpc");

    private static final Encoding[] VALUES = values();

    private final String mediaType;

    Encoding(String mediaType) {
        this.mediaType = mediaType;
    }

    /** The media type of this encoding, e.g. {@code application/json}. */
    public String mediaType() {
        return mediaType;
    }

    /** True for the etcd API's encodings, which only its gRPC front end uses. */
    public boolean isEtcd() {
        return this == ETCD || this == ETCD_PREV_KV;
    }

    /** All encodings, in ordinal order (a shared array: do not modify). */
    static Encoding[] all() {
        return VALUES;
    }
}
