package io.watchfanout.fanout.etcd;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The bytes of etcd API frames ({@link EtcdEncodings#ETCD}, {@link EtcdEncodings#ETCD_PREV_KV}): pieces of an
 * {@code etcdserverpb.WatchResponse} that a response concatenates after its own header fields.
 * The schema's {@code KeyValue} has {@code mvccpb.KeyValue}'s field numbers and types, and
 * {@code Event}'s fields 1–3 are {@code mvccpb.Event}'s, so a key-value is written as it is.
 *
 * <p>Field numbers of {@code WatchResponse} (etcd's {@code rpc.proto}): header 1, watch_id 2,
 * created 3, canceled 4, compact_revision 5, cancel_reason 6, fragment 7, events 11; of
 * {@code ResponseHeader}: cluster_id 1, member_id 2, revision 3, raft_term 4. Stateless.
 */
public final class EtcdFrames {
    /** {@code WatchResponse.header}. */
    public static final int HEADER = 1;
    /** {@code WatchResponse.watch_id}. */
    public static final int WATCH_ID = 2;
    /** {@code WatchResponse.created}. */
    public static final int CREATED = 3;
    /** {@code WatchResponse.canceled}. */
    public static final int CANCELED = 4;
    /** {@code WatchResponse.compact_revision}. */
    public static final int COMPACT_REVISION = 5;
    /** {@code WatchResponse.cancel_reason}. */
    public static final int CANCEL_REASON = 6;
    /** {@code WatchResponse.fragment}. */
    public static final int FRAGMENT = 7;
    /** {@code WatchResponse.events}. */
    public static final int EVENTS = 11;
    /** {@code ResponseHeader.revision}. */
    public static final int HEADER_REVISION = 3;

    private static final int EVENT_KV = 2;
    private static final int EVENT_PREV_KV = 3;
    private static final int KV_MOD_REVISION = 3;

    private EtcdFrames() {}

    /** The {@code events} field holding {@code event} as an {@code mvccpb.Event}. */
    static byte[] event(Event event, boolean withPrevKv) {
        boolean delete = event.getType() == Event.Type.DELETE;
        boolean prev = withPrevKv && event.hasPrevKv();
        int size = (delete ? 2 : 0)
                + messageSize(EVENT_KV, event.getKv())
                + (prev ? messageSize(EVENT_PREV_KV, event.getPrevKv()) : 0);
        byte[] out = new byte
                [CodedOutputStream.computeTagSize(EVENTS) + CodedOutputStream.computeUInt32SizeNoTag(size) + size];
        CodedOutputStream cos = CodedOutputStream.newInstance(out);
        try {
            cos.writeTag(EVENTS, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            cos.writeUInt32NoTag(size);
            if (delete) {
                cos.writeEnum(1, 1);
            }
            cos.writeMessage(EVENT_KV, event.getKv());
            if (prev) {
                cos.writeMessage(EVENT_PREV_KV, event.getPrevKv());
            }
            cos.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException("encoding into an array cannot fail", e);
        }
        return out;
    }

    /** The {@code header} field with only {@code revision} set. */
    static byte[] header(long revision) {
        int size = CodedOutputStream.computeInt64Size(HEADER_REVISION, revision);
        byte[] out = new byte
                [CodedOutputStream.computeTagSize(HEADER) + CodedOutputStream.computeUInt32SizeNoTag(size) + size];
        CodedOutputStream cos = CodedOutputStream.newInstance(out);
        try {
            cos.writeTag(HEADER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            cos.writeUInt32NoTag(size);
            cos.writeInt64(HEADER_REVISION, revision);
            cos.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException("encoding into an array cannot fail", e);
        }
        return out;
    }

    static byte[] canceled(String reason) {
        byte[] out = new byte
                [CodedOutputStream.computeBoolSize(CANCELED, true)
                        + CodedOutputStream.computeStringSize(CANCEL_REASON, reason)];
        CodedOutputStream cos = CodedOutputStream.newInstance(out);
        try {
            cos.writeBool(CANCELED, true);
            cos.writeString(CANCEL_REASON, reason);
            cos.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException("encoding into an array cannot fail", e);
        }
        return out;
    }

    private static int messageSize(int field, KeyValue kv) {
        return CodedOutputStream.computeMessageSize(field, kv);
    }

    /** What a frame of an etcd encoding is, read from its first tag. */
    public enum Kind {
        EVENT,
        PROGRESS,
        CANCELED
    }

    /** The kind of an etcd-encoding frame. */
    public static Kind kind(byte[] frame, int offset) {
        int field = (frame[offset] & 0xff) >>> 3;
        return field == EVENTS ? Kind.EVENT : field == HEADER ? Kind.PROGRESS : Kind.CANCELED;
    }

    /**
     * The revision an etcd-encoding frame speaks of: an event's {@code kv.mod_revision} (a DELETE's
     * is its deletion revision), a progress frame's header revision; 0 for a cancel. Read in place,
     * without allocating: it is asked once per response.
     *
     * @throws IllegalStateException if the frame is not one this node built
     */
    public static long revision(byte[] frame, int offset, int length) {
        int end = offset + length;
        int field = (frame[offset] & 0xff) >>> 3;
        if (field != EVENTS && field != HEADER) {
            return 0;
        }
        int p = offset + 1;
        int size = (int) varint(frame, p, end);
        p = skipVarint(frame, p, end);
        if (field == HEADER) {
            return fieldVarint(frame, p, p + size, HEADER_REVISION);
        }
        long kv = lengthDelimited(frame, p, p + size, EVENT_KV);
        if (kv < 0) {
            return 0;
        }
        int kvStart = (int) (kv >>> 32);
        return fieldVarint(frame, kvStart, kvStart + (int) kv, KV_MOD_REVISION);
    }

    /** The varint field {@code field} of the message in {@code [p, end)}, 0 when absent. */
    private static long fieldVarint(byte[] b, int p, int end, int field) {
        while (p < end) {
            int tag = (int) varint(b, p, end);
            p = skipVarint(b, p, end);
            if (tag >>> 3 == field && (tag & 7) == WireFormat.WIRETYPE_VARINT) {
                return varint(b, p, end);
            }
            p = skipValue(b, p, end, tag);
        }
        return 0;
    }

    /** The length-delimited field {@code field} of the message in {@code [p, end)}: start << 32 | length, or -1. */
    private static long lengthDelimited(byte[] b, int p, int end, int field) {
        while (p < end) {
            int tag = (int) varint(b, p, end);
            p = skipVarint(b, p, end);
            if (tag >>> 3 == field && (tag & 7) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                int size = (int) varint(b, p, end);
                return ((long) skipVarint(b, p, end) << 32) | size;
            }
            p = skipValue(b, p, end, tag);
        }
        return -1;
    }

    private static int skipValue(byte[] b, int p, int end, int tag) {
        switch (tag & 7) {
            case WireFormat.WIRETYPE_VARINT:
                return skipVarint(b, p, end);
            case WireFormat.WIRETYPE_FIXED64:
                return p + 8;
            case WireFormat.WIRETYPE_LENGTH_DELIMITED:
                return skipVarint(b, p, end) + (int) varint(b, p, end);
            case WireFormat.WIRETYPE_FIXED32:
                return p + 4;
            default:
                throw new IllegalStateException(
                        "an etcd frame this node built does not parse (wire type " + (tag & 7) + ")");
        }
    }

    private static long varint(byte[] b, int p, int end) {
        long v = 0;
        for (int shift = 0; shift < 64 && p < end; shift += 7) {
            byte x = b[p++];
            v |= (long) (x & 0x7f) << shift;
            if (x >= 0) {
                return v;
            }
        }
        throw new IllegalStateException("an etcd frame this node built does not parse (varint)");
    }

    private static int skipVarint(byte[] b, int p, int end) {
        while (p < end) {
            if (b[p++] >= 0) {
                return p;
            }
        }
        throw new IllegalStateException("an etcd frame this node built does not parse (varint)");
    }
}
