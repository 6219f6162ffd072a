package io.watchfanout.fanout.testing;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.WatchClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Decodes frames in tests. */
public final class Frames {
    private Frames() {}

    private static <B extends Message.Builder> B merge(String json, B builder) {
        try {
            JsonFormat.parser().merge(json, builder);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "not a " + builder.getDescriptorForType().getName() + ": " + json, e);
        }
        return builder;
    }

    /** Parses one JSON frame (with or without its newline). */
    public static WatchEvent parseJsonLine(String line) {
        return merge(line, WatchEvent.newBuilder()).build();
    }

    /** Parses a JSON {@code Status} body (an error answer). */
    public static Status parseStatus(String json) {
        return merge(json, Status.newBuilder()).build();
    }

    /** One Server-Sent Events block: its fields (id null when absent) and the frame in its data. */
    public record SseEvent(String id, String event, WatchEvent frame) {}

    /**
     * Parses one SSE event block (the text up to and without its blank line), requiring the
     * node's form: optional {@code id:}, then {@code event:}, then one {@code data:} line. The
     * testkit's watch client reads SSE streams with the same parser.
     */
    public static SseEvent parseSse(String block) {
        WatchClient.SseEvent e = WatchClient.parseSse(block);
        return new SseEvent(e.id(), e.event(), e.frame());
    }

    /** Decodes one frame of the given encoding. */
    public static WatchEvent decode(ByteBuffer frame, Encoding encoding) {
        if (encoding != WatchEventEncodings.SSE) {
            return decode(frame, encoding == WatchEventEncodings.JSON);
        }
        return parseSseFrame(frame).frame();
    }

    /** Parses one SSE frame buffer (its block and the blank line that ends it). */
    public static SseEvent parseSseFrame(ByteBuffer frame) {
        byte[] bytes = new byte[frame.remaining()];
        frame.duplicate().get(bytes);
        String s = new String(bytes, StandardCharsets.UTF_8);
        if (!s.endsWith("\n\n") || s.indexOf("\n\n") != s.length() - 2) {
            throw new IllegalStateException("not one SSE block: " + s);
        }
        return parseSse(s.substring(0, s.length() - 2));
    }

    /** Decodes one frame of JSON or protobuf. */
    public static WatchEvent decode(ByteBuffer frame, boolean json) {
        byte[] bytes = new byte[frame.remaining()];
        frame.duplicate().get(bytes);
        if (json) {
            String s = new String(bytes, StandardCharsets.UTF_8);
            if (!s.endsWith("\n")) {
                throw new IllegalStateException("JSON frame without newline: " + s);
            }
            return parseJsonLine(s);
        }
        try {
            CodedInputStream in = CodedInputStream.newInstance(bytes);
            int len = in.readRawVarint32();
            WatchEvent e = WatchEvent.parseFrom(in.readRawBytes(len));
            if (!in.isAtEnd()) {
                throw new IllegalStateException("trailing bytes");
            }
            return e;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Decodes a stream of delimited WatchEvents. */
    public static List<WatchEvent> decodeDelimited(byte[] bytes) throws IOException {
        List<WatchEvent> out = new ArrayList<>();
        java.io.ByteArrayInputStream in = new java.io.ByteArrayInputStream(bytes);
        WatchEvent e;
        while ((e = WatchEvent.parseDelimitedFrom(in)) != null) {
            out.add(e);
        }
        return out;
    }
}
