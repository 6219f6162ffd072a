package io.watchfanout.kube.codec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A stored protobuf object with its {@code metadata.resourceVersion} set, made from the stored
 * bytes without decoding the object: the new ObjectMeta is the stored one with field 6 replaced,
 * and the lengths around it are recomputed first, so that the result is written into one buffer
 * of the exact size in one pass (kube-apiserver's envelope is marshalled the same way, sizes
 * first, back to front).
 *
 * <p>Two forms: the full envelope ({@code k8s\0} + {@code runtime.Unknown}), which a protobuf
 * watch event and a get carry, and the bare typed message, which is an item of a protobuf list.
 * Everything but field 6 of ObjectMeta is copied byte for byte, fields the node's schema does not
 * know included, so a protobuf client gets exactly what kube-apiserver would send.
 *
 * <p>Immutable once made; the stored bytes must not change while it is used.
 */
public final class ResourceVersionSplice {
    private static final int TAG_OBJECT_META = 1 << 3 | ProtoReader.LENGTH_DELIMITED;
    private static final int TAG_RESOURCE_VERSION = 6 << 3 | ProtoReader.LENGTH_DELIMITED;
    private static final int TAG_RAW = 2 << 3 | ProtoReader.LENGTH_DELIMITED;

    private final byte[] value;
    private final int valueStart;
    private final int valueEnd;
    private final int rawFieldStart;
    private final int rawStart;
    private final int rawEnd;
    // The stored ObjectMeta field (tag to end) and the spans of it that are copied.
    private final int metaFieldStart;
    private final int metaFieldEnd;
    private final int[] copySpans; // pairs of [from, to) inside ObjectMeta's content, in order
    private final int insertAfterSpan; // the new field 6 goes after this many spans
    private final byte[] resourceVersion;
    private final int metaLength;
    private final int rawLength;

    private ResourceVersionSplice(
            byte[] value,
            int valueStart,
            int valueEnd,
            int rawFieldStart,
            int rawStart,
            int rawEnd,
            int metaFieldStart,
            int metaFieldEnd,
            int[] copySpans,
            int insertAfterSpan,
            byte[] resourceVersion) {
        this.value = value;
        this.valueStart = valueStart;
        this.valueEnd = valueEnd;
        this.rawFieldStart = rawFieldStart;
        this.rawStart = rawStart;
        this.rawEnd = rawEnd;
        this.metaFieldStart = metaFieldStart;
        this.metaFieldEnd = metaFieldEnd;
        this.copySpans = copySpans;
        this.insertAfterSpan = insertAfterSpan;
        this.resourceVersion = resourceVersion;
        int meta = 1 + varintSize(resourceVersion.length) + resourceVersion.length;
        for (int i = 0; i < copySpans.length; i += 2) {
            meta += copySpans[i + 1] - copySpans[i];
        }
        this.metaLength = meta;
        this.rawLength = (metaFieldStart - rawStart) + 1 + varintSize(meta) + meta + (rawEnd - metaFieldEnd);
    }

    /**
     * Plans the splice of {@code resourceVersion} into the stored envelope {@code value[off, off + len)}.
     *
     * @param object what {@link StoredObject#of} found in the same bytes; must be {@code PROTOBUF}
     * @throws UndecodableObjectException if the object's bytes are not a valid message
     */
    public static ResourceVersionSplice of(byte[] value, int off, int len, StoredObject object, long resourceVersion)
            throws UndecodableObjectException {
        if (!object.isProtobuf()) {
            throw new IllegalArgumentException("not a protobuf envelope: " + object.encoding());
        }
        int rawStart = object.rawOffset();
        int rawEnd = rawStart + object.rawLength();
        int rawFieldStart = rawStart - varintSize(object.rawLength()) - 1;
        if (rawFieldStart < off + 4 || value[rawFieldStart] != TAG_RAW) {
            // A non-minimal length prefix: Go never writes one, and the splice would mis-cut.
            throw new UndecodableObjectException("protobuf envelope with a non-canonical object length");
        }
        byte[] rv = Long.toString(resourceVersion).getBytes(StandardCharsets.US_ASCII);
        try {
            ProtoReader raw = new ProtoReader(value, rawStart, rawEnd);
            while (raw.hasMore()) {
                int fieldStart = raw.position();
                int tag = raw.readTag();
                if (tag != TAG_OBJECT_META) {
                    raw.skip(tag);
                    continue;
                }
                int length = raw.readLength();
                int contentStart = raw.position();
                raw.skipBytes(length);
                return planMeta(
                        value,
                        off,
                        off + len,
                        rawFieldStart,
                        rawStart,
                        rawEnd,
                        fieldStart,
                        contentStart,
                        raw.position(),
                        rv);
            }
        } catch (ProtoReader.MalformedException e) {
            throw new UndecodableObjectException("not a valid " + object.kind() + " message: " + e.getMessage());
        }
        // No ObjectMeta at all: one holding only the resourceVersion goes first.
        return new ResourceVersionSplice(
                value, off, off + len, rawFieldStart, rawStart, rawEnd, rawStart, rawStart, new int[0], 0, rv);
    }

    private static ResourceVersionSplice planMeta(
            byte[] value,
            int valueStart,
            int valueEnd,
            int rawFieldStart,
            int rawStart,
            int rawEnd,
            int metaFieldStart,
            int metaStart,
            int metaEnd,
            byte[] rv)
            throws ProtoReader.MalformedException {
        int[] spans = new int[8];
        int count = 0;
        int insertAfter = -1;
        int spanStart = metaStart;
        ProtoReader meta = new ProtoReader(value, metaStart, metaEnd);
        while (meta.hasMore()) {
            int fieldStart = meta.position();
            int tag = meta.readTag();
            if (insertAfter < 0 && (tag >>> 3) > 6) {
                // Keep tag order: the new field 6 goes before the first field above it.
                if (fieldStart > spanStart) {
                    spans = add(spans, count, spanStart, fieldStart);
                    count += 2;
                }
                spanStart = fieldStart;
                insertAfter = count / 2;
            }
            meta.skip(tag);
            if (tag == TAG_RESOURCE_VERSION) {
                if (fieldStart > spanStart) {
                    spans = add(spans, count, spanStart, fieldStart);
                    count += 2;
                }
                spanStart = meta.position();
            }
        }
        if (metaEnd > spanStart) {
            spans = add(spans, count, spanStart, metaEnd);
            count += 2;
        }
        if (insertAfter < 0) {
            insertAfter = count / 2;
        }
        return new ResourceVersionSplice(
                value,
                valueStart,
                valueEnd,
                rawFieldStart,
                rawStart,
                rawEnd,
                metaFieldStart,
                metaEnd,
                Arrays.copyOf(spans, count),
                insertAfter,
                rv);
    }

    private static int[] add(int[] spans, int count, int from, int to) {
        int[] s = count + 2 > spans.length ? Arrays.copyOf(spans, spans.length * 2) : spans;
        s[count] = from;
        s[count + 1] = to;
        return s;
    }

    /** Length of the typed message with the resourceVersion set (a protobuf list's item). */
    public int objectLength() {
        return rawLength;
    }

    /** Length of the full envelope with the resourceVersion set (a watch event's or a get's object). */
    public int envelopeLength() {
        return (rawFieldStart - valueStart) + 1 + varintSize(rawLength) + rawLength + (valueEnd - rawEnd);
    }

    /**
     * Length of the ObjectMeta field alone (tag, length and message) with the resourceVersion
     * set: a {@code meta.v1.PartialObjectMetadata} message, whose field 1 is the ObjectMeta too.
     */
    public int metaFieldLength() {
        return 1 + varintSize(metaLength) + metaLength;
    }

    /** Writes the typed message at {@code dst[pos]}; returns the position after it. */
    public int writeObject(byte[] dst, int pos) {
        pos = copy(value, rawStart, metaFieldStart, dst, pos);
        pos = writeMetaField(dst, pos);
        return copy(value, metaFieldEnd, rawEnd, dst, pos);
    }

    /**
     * Writes the ObjectMeta field alone ({@link #metaFieldLength} bytes) at {@code dst[pos]};
     * returns the position after it.
     */
    public int writeMetaField(byte[] dst, int pos) {
        dst[pos++] = TAG_OBJECT_META;
        pos = writeVarint(dst, pos, metaLength);
        for (int span = 0; span <= copySpans.length / 2; span++) {
            if (span == insertAfterSpan) {
                dst[pos++] = TAG_RESOURCE_VERSION;
                pos = writeVarint(dst, pos, resourceVersion.length);
                pos = copy(resourceVersion, 0, resourceVersion.length, dst, pos);
            }
            if (span < copySpans.length / 2) {
                pos = copy(value, copySpans[2 * span], copySpans[2 * span + 1], dst, pos);
            }
        }
        return pos;
    }

    /** Writes the full envelope at {@code dst[pos]}; returns the position after it. */
    public int writeEnvelope(byte[] dst, int pos) {
        pos = copy(value, valueStart, rawFieldStart, dst, pos);
        dst[pos++] = TAG_RAW;
        pos = writeVarint(dst, pos, rawLength);
        pos = writeObject(dst, pos);
        return copy(value, rawEnd, valueEnd, dst, pos);
    }

    /** The full envelope in an array of its own. */
    public byte[] envelope() {
        byte[] out = new byte[envelopeLength()];
        writeEnvelope(out, 0);
        return out;
    }

    /** The typed message in an array of its own. */
    public byte[] object() {
        byte[] out = new byte[objectLength()];
        writeObject(out, 0);
        return out;
    }

    private static int copy(byte[] src, int from, int to, byte[] dst, int pos) {
        System.arraycopy(src, from, dst, pos, to - from);
        return pos + to - from;
    }

    static int varintSize(long v) {
        int n = 1;
        while ((v & ~0x7fL) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    static int writeVarint(byte[] dst, int pos, long v) {
        while ((v & ~0x7fL) != 0) {
            dst[pos++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        dst[pos++] = (byte) v;
        return pos;
    }
}
