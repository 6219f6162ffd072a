package io.watchfanout.fanout.frame;

import com.google.protobuf.CodedOutputStream;
import io.watchfanout.common.JsonBuffer;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * {@link WatchEventEncodings}' frames: a {@code WatchEvent} as a JSON line, as a delimited
 * protobuf message, or as a Server-Sent Event. Frames are read-only direct buffers, so that the
 * socket write of a shared frame needs no per-connection copy into a temporary direct buffer.
 * In SSE, EVENT and BOOKMARK frames carry an {@code id:} line with their resource version,
 * INITIAL and ERROR frames none ({@link SseFrames} says why).
 *
 * <p>Stateless and thread-safe.
 */
final class WatchEventFormat implements FrameFormat {
    enum Form {
        JSON,
        PROTOBUF,
        SSE
    }

    private final Form form;

    WatchEventFormat(Form form) {
        this.form = form;
    }

    @Override
    public ByteBuffer event(CachedEvent event, FrameKind kind) {
        // An SSE frame reuses the JSON frame's bytes when the event has one (no second rendering).
        ByteBuffer json = form == Form.SSE ? event.peek(WatchEventEncodings.JSON, kind) : null;
        return encode(WatchEventEncodings.toWatchEvent(event.event(), event.revision(), kind), true, json);
    }

    @Override
    public ByteBuffer initial(KeyValue kv, ObjectAttributes attributes, CachedEvent lastEvent) {
        ByteBuffer json = form == Form.SSE && lastEvent != null
                ? lastEvent.peek(WatchEventEncodings.JSON, FrameKind.INITIAL)
                : null;
        return encode(WatchEventEncodings.initialWatchEvent(kv), false, json);
    }

    @Override
    public ByteBuffer bookmark(long revision, boolean initialEventsEnd) {
        return encode(WatchEventEncodings.bookmarkEvent(revision, initialEventsEnd), true, null);
    }

    @Override
    public ByteBuffer error(Status status) {
        return encode(
                WatchEvent.newBuilder()
                        .setType(WatchEvent.Type.ERROR)
                        .setStatus(status)
                        .build(),
                false,
                null);
    }

    @Override
    public ByteBuffer inRevision(ByteBuffer eventFrame) {
        return form == Form.SSE ? SseFrames.withoutId(eventFrame) : eventFrame;
    }

    @Override
    public boolean hasInRevisionForm() {
        return form == Form.SSE;
    }

    /**
     * @param sseId whether an SSE frame carries {@code id:}
     * @param jsonFrame the event's JSON frame, or null, for SSE
     */
    private ByteBuffer encode(WatchEvent event, boolean sseId, ByteBuffer jsonFrame) {
        byte[] bytes;
        int length;
        switch (form) {
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
                byte[] json;
                if (jsonFrame != null) {
                    json = new byte[jsonFrame.remaining()];
                    jsonFrame.duplicate().get(json);
                } else {
                    json = ProtoJson.toJson(event);
                }
                bytes = SseFrames.build(event, sseId, json, json.length);
                length = bytes.length;
        }
        ByteBuffer direct = ByteBuffer.allocateDirect(length);
        direct.put(bytes, 0, length).flip();
        return direct.asReadOnlyBuffer();
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
}
