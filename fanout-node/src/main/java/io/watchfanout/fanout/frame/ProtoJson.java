package io.watchfanout.fanout.frame;

import io.watchfanout.common.JsonBuffer;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.util.Arrays;

/**
 * A hand-written encoder of the proto3 canonical JSON of the messages the HTTP API sends
 * ({@code WatchEvent}, {@code KeyValue}, {@code Status}, {@code KeyValueList}): lowerCamelCase
 * field names in field-number order, int64 as quoted strings, bytes as padded base64,
 * enums by name, fields at their default value omitted, message fields printed when set.
 * This is exactly what {@code JsonFormat.printer().omittingInsignificantWhitespace()} prints,
 * at a fraction of its cost (docs/BENCHMARKS.md, JMH); {@code ProtoJsonTest} parses the output back
 * with {@code JsonFormat.parser()} for many random messages.
 *
 * <p>Stateless and thread-safe. A new field in watch.proto or records.proto must be added
 * here too: the round-trip test fails until it is.
 */
public final class ProtoJson {
    private ProtoJson() {}

    /** The canonical JSON of {@code event}, without a trailing newline. */
    public static byte[] toJson(WatchEvent event) {
        JsonBuffer out = new JsonBuffer(estimatedSize(event));
        writeWatchEvent(out, event);
        return Arrays.copyOf(out.array(), out.length());
    }

    /** The canonical JSON of {@code status}. */
    public static byte[] toJson(Status status) {
        JsonBuffer out = new JsonBuffer(128);
        writeStatus(out, status);
        return Arrays.copyOf(out.array(), out.length());
    }

    /** The canonical JSON of {@code list}. */
    public static byte[] toJson(KeyValueList list) {
        JsonBuffer out = new JsonBuffer(64 + list.getKvsCount() * 128);
        out.raw('{');
        boolean first = true;
        if (list.getKvsCount() > 0) {
            first = name(out, first, "kvs");
            out.raw('[');
            for (int i = 0; i < list.getKvsCount(); i++) {
                if (i > 0) {
                    out.raw(',');
                }
                writeKeyValue(out, list.getKvs(i));
            }
            out.raw(']');
        }
        if (list.getResourceVersion() != 0) {
            first = name(out, first, "resourceVersion");
            out.quotedNumber(list.getResourceVersion());
        }
        if (!list.getContinue().isEmpty()) {
            first = name(out, first, "continue");
            out.string(list.getContinue());
        }
        if (list.hasRemainingItemCount()) {
            // Explicit presence (proto3 optional): printed even at 0, as JsonFormat does.
            name(out, first, "remainingItemCount");
            out.quotedNumber(list.getRemainingItemCount());
        }
        out.raw('}');
        return Arrays.copyOf(out.array(), out.length());
    }

    /** Writes {@code event} followed by {@code '\n'} into a new array (one JSON-lines frame); thread-safe. */
    public static byte[] toJsonLine(WatchEvent event) {
        JsonBuffer out = jsonLine(event);
        return Arrays.copyOf(out.array(), out.length());
    }

    /**
     * {@code event} followed by {@code '\n'} in a buffer sized from the event's bytes (base64 is
     * 4/3 of them), so that a 1 KiB value is rendered without regrowing; the frame is copied
     * once, from this buffer into its direct buffer.
     */
    static JsonBuffer jsonLine(WatchEvent event) {
        JsonBuffer out = new JsonBuffer(estimatedSize(event));
        writeWatchEvent(out, event);
        out.raw('\n');
        return out;
    }

    /** An upper estimate of the JSON of {@code event} for ordinary keys and messages. */
    private static int estimatedSize(WatchEvent event) {
        int bytes = 0;
        if (event.hasObject()) {
            bytes += event.getObject().getKey().size()
                    + event.getObject().getValue().size();
        }
        int size = 192 + (bytes + 2 * 3) / 3 * 4;
        if (event.hasStatus()) {
            size += 64
                    + 2
                            * (event.getStatus().getMessage().length()
                                    + event.getStatus().getReason().length());
        }
        return size;
    }

    private static boolean name(JsonBuffer out, boolean first, String name) {
        if (!first) {
            out.raw(',');
        }
        out.raw('"').ascii(name).raw('"').raw(':');
        return false;
    }

    static void writeWatchEvent(JsonBuffer out, WatchEvent e) {
        out.raw('{');
        boolean first = true;
        if (e.getTypeValue() != 0) {
            first = name(out, first, "type");
            WatchEvent.Type type = e.getType();
            if (type == WatchEvent.Type.UNRECOGNIZED) {
                out.number(e.getTypeValue());
            } else {
                out.raw('"').ascii(type.name()).raw('"');
            }
        }
        if (e.hasObject()) {
            first = name(out, first, "object");
            writeKeyValue(out, e.getObject());
        }
        if (e.getResourceVersion() != 0) {
            first = name(out, first, "resourceVersion");
            out.quotedNumber(e.getResourceVersion());
        }
        if (e.getInitialEventsEnd()) {
            first = name(out, first, "initialEventsEnd");
            out.ascii("true");
        }
        if (e.hasStatus()) {
            first = name(out, first, "status");
            writeStatus(out, e.getStatus());
        }
        if (e.getIndex() != 0) {
            first = name(out, first, "index");
            out.number(e.getIndex());
        }
        if (e.getCount() != 0) {
            name(out, first, "count");
            out.number(e.getCount());
        }
        out.raw('}');
    }

    static void writeKeyValue(JsonBuffer out, KeyValue kv) {
        out.raw('{');
        boolean first = true;
        if (!kv.getKey().isEmpty()) {
            first = name(out, first, "key");
            out.base64(kv.getKey());
        }
        if (kv.getCreateRevision() != 0) {
            first = name(out, first, "createRevision");
            out.quotedNumber(kv.getCreateRevision());
        }
        if (kv.getModRevision() != 0) {
            first = name(out, first, "modRevision");
            out.quotedNumber(kv.getModRevision());
        }
        if (kv.getVersion() != 0) {
            first = name(out, first, "version");
            out.quotedNumber(kv.getVersion());
        }
        if (!kv.getValue().isEmpty()) {
            first = name(out, first, "value");
            out.base64(kv.getValue());
        }
        if (kv.getLease() != 0) {
            name(out, first, "lease");
            out.quotedNumber(kv.getLease());
        }
        out.raw('}');
    }

    static void writeStatus(JsonBuffer out, Status s) {
        out.raw('{');
        boolean first = true;
        if (s.getCode() != 0) {
            first = name(out, first, "code");
            out.number(s.getCode());
        }
        if (!s.getReason().isEmpty()) {
            first = name(out, first, "reason");
            out.string(s.getReason());
        }
        if (!s.getMessage().isEmpty()) {
            name(out, first, "message");
            out.string(s.getMessage());
        }
        out.raw('}');
    }
}
