package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.frame.JsonBuffer;
import io.watchfanout.schema.v1.KeyValue;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Writes one page of a Kubernetes list in kube-apiserver's forms, streamed through a bounded
 * buffer so that memory grows with an item, not with the list:
 * <ul>
 *   <li>JSON: {@code {"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion",
 *       "continue","remainingItemCount"},"items":[…]}}, items without kind and apiVersion;
 *   <li>protobuf: {@code k8s\0} + {@code runtime.Unknown{TypeMeta{v1, PodList}, raw = ListMeta
 *       (field 1) + items (field 2, each the stored typed message with its resourceVersion)}}, all
 *       lengths computed before the first byte is written.
 * </ul>
 *
 * <p>Thread-safe: holds nothing of a response; one writer serves every list.
 */
public final class KubeListWriter {
    /** Where the bytes of a list go (a response channel), in order. */
    public interface Sink {
        /** Takes {@code buf[off, off + len)}; the bytes may be reused once it returns. */
        void write(byte[] buf, int off, int len);

        /** Notes {@code n} fields unknown to the schema in an item just written (JSON only). */
        default void unknownFields(int n) {}
    }

    /**
     * One stored object of the page, {@code value[offset, offset + length)} (read, never written:
     * it may be the cache's own bytes), and the revision it was last modified at.
     */
    public record Item(byte[] value, int offset, int length, long modRevision) {
        /** A whole array's object. */
        public Item(byte[] value, long modRevision) {
            this(value, 0, value.length, modRevision);
        }

        /** The cached key-value's object, without copying its bytes. */
        static Item of(KeyValue kv) {
            StoredBytes v = StoredBytes.of(kv.getValue());
            return new Item(v.array, v.offset, v.length, kv.getModRevision());
        }
    }

    private static final int FLUSH_BYTES = 64 * 1024;
    /**
     * Each thread's staging buffers, reused page after page: a page is written out before its
     * writer returns, and a sink never keeps the bytes it is given.
     */
    private static final ThreadLocal<JsonBuffer> JSON_STAGING =
            ThreadLocal.withInitial(() -> new JsonBuffer(FLUSH_BYTES + 1024));

    private static final ThreadLocal<byte[]> PROTOBUF_STAGING = ThreadLocal.withInitial(() -> new byte[FLUSH_BYTES]);
    private static final byte[] MAGIC = {'k', '8', 's', 0};

    private final KubeSchema schema;
    private final ProtoJsonWriter writer;

    /** A writer of lists of objects described by {@code schema}. */
    public KubeListWriter(KubeSchema schema, ProtoJsonWriter writer) {
        this.schema = schema;
        this.writer = writer;
    }

    /**
     * Writes a JSON list page.
     *
     * @param continueToken the next page's token, or null on the last page
     * @param remainingItemCount written when {@code >= 0} and there is a next page
     * @return the number of fields unknown to the schema across the items
     * @throws UndecodableObjectException with the index of the item that cannot be rendered
     *     ({@link UndecodableObjectException#item()}); the caller answers with a Status naming its key (bytes already sunk are then a broken
     *     response, as kube-apiserver's are)
     */
    public int json(
            KubeResource resource,
            List<Item> items,
            long resourceVersion,
            String continueToken,
            long remainingItemCount,
            Sink sink)
            throws UndecodableObjectException {
        JsonBuffer out = JSON_STAGING.get();
        out.reset();
        out.ascii("{\"kind\":")
                .string(resource.listKind())
                .ascii(",\"apiVersion\":")
                .string(resource.apiVersion())
                .ascii(",\"metadata\":{\"resourceVersion\":\"")
                .number(resourceVersion)
                .raw('"');
        if (continueToken != null) {
            out.ascii(",\"continue\":").string(continueToken);
            if (remainingItemCount >= 0) {
                out.ascii(",\"remainingItemCount\":").number(remainingItemCount);
            }
        }
        out.ascii("},\"items\":[");
        int unknown = 0;
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                out.raw(',');
            }
            Item item = items.get(i);
            try {
                StoredObject object = StoredObject.of(item.value(), item.offset(), item.length());
                switch (object.encoding()) {
                    case PROTOBUF -> {
                        int n = writer.writeObject(
                                out,
                                schema.type(object.apiVersion(), object.kind())
                                        .orElseThrow(() -> new UndecodableObjectException("no schema for "
                                                + object.apiVersion() + " " + object.kind() + " on this node")),
                                null,
                                null,
                                item.value(),
                                object.rawOffset(),
                                object.rawLength(),
                                item.modRevision());
                        if (n > 0) {
                            unknown += n;
                            sink.unknownFields(n);
                        }
                    }
                    case JSON -> {
                        byte[] line = KubeWatchFrames.jsonStoredObject(
                                Arrays.copyOfRange(item.value(), item.offset(), item.offset() + item.length()),
                                item.modRevision());
                        out.bytes(line, 0, line.length);
                    }
                    default -> throw KubeWatchFrames.undecodable(object);
                }
            } catch (UndecodableObjectException e) {
                throw new UndecodableObjectException(e.getMessage(), i);
            }
            if (out.length() >= FLUSH_BYTES) {
                sink.write(out.array(), 0, out.length());
                out.reset();
            }
        }
        out.ascii("]}");
        sink.write(out.array(), 0, out.length());
        return unknown;
    }

    /** runtime.Unknown's contentEncoding and contentType, empty as kube-apiserver writes them. */
    private static final byte[] PROTOBUF_TAIL = {
        3 << 3 | ProtoReader.LENGTH_DELIMITED, 0, 4 << 3 | ProtoReader.LENGTH_DELIMITED, 0
    };

    /** The magic, the envelope's TypeMeta, and the list's raw up to its first item. */
    private static void writeProtobufHead(
            KubeResource resource,
            long itemsLength,
            long resourceVersion,
            String continueToken,
            long remainingItemCount,
            Sink sink) {
        ProtoWriter listMeta = new ProtoWriter().string(2, Long.toString(resourceVersion));
        if (continueToken != null) {
            listMeta.string(3, continueToken);
            if (remainingItemCount >= 0) {
                listMeta.varint(4, remainingItemCount);
            }
        }
        byte[] meta = listMeta.toByteArray();
        long raw = 1 + ResourceVersionSplice.varintSize(meta.length) + meta.length + itemsLength;
        byte[] typeMeta = new ProtoWriter()
                .string(1, resource.apiVersion())
                .string(2, resource.listKind())
                .toByteArray();
        byte[] head = new byte[64 + typeMeta.length + meta.length];
        int pos = 0;
        System.arraycopy(MAGIC, 0, head, pos, MAGIC.length);
        pos += MAGIC.length;
        head[pos++] = 1 << 3 | ProtoReader.LENGTH_DELIMITED;
        pos = ResourceVersionSplice.writeVarint(head, pos, typeMeta.length);
        System.arraycopy(typeMeta, 0, head, pos, typeMeta.length);
        pos += typeMeta.length;
        head[pos++] = 2 << 3 | ProtoReader.LENGTH_DELIMITED;
        pos = ResourceVersionSplice.writeVarint(head, pos, raw);
        head[pos++] = 1 << 3 | ProtoReader.LENGTH_DELIMITED;
        pos = ResourceVersionSplice.writeVarint(head, pos, meta.length);
        System.arraycopy(meta, 0, head, pos, meta.length);
        pos += meta.length;
        sink.write(head, 0, pos);
    }

    /**
     * Writes a protobuf list page: every item's splice is planned first, so that the envelope's
     * and the list's lengths are known before the first byte, then the items are written one by
     * one through a buffer of at most one item plus 64 KiB.
     *
     * @throws UndecodableObjectException with the item's index, if an item is not a protobuf object (custom resources have
     *     no protobuf form) or is malformed
     */
    public void protobuf(
            KubeResource resource,
            List<Item> items,
            long resourceVersion,
            String continueToken,
            long remainingItemCount,
            Sink sink)
            throws UndecodableObjectException {
        List<ResourceVersionSplice> splices = new ArrayList<>(items.size());
        long itemsLength = 0;
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
            ResourceVersionSplice splice;
            try {
                StoredObject object = StoredObject.of(item.value(), item.offset(), item.length());
                if (!object.isProtobuf()) {
                    throw KubeWatchFrames.undecodable(object);
                }
                splice = ResourceVersionSplice.of(
                        item.value(), item.offset(), item.length(), object, item.modRevision());
            } catch (UndecodableObjectException e) {
                throw new UndecodableObjectException(e.getMessage(), i);
            }
            splices.add(splice);
            itemsLength += 1 + ResourceVersionSplice.varintSize(splice.objectLength()) + splice.objectLength();
        }
        writeProtobufHead(resource, itemsLength, resourceVersion, continueToken, remainingItemCount, sink);

        byte[] buf = PROTOBUF_STAGING.get();
        int len = 0;
        for (ResourceVersionSplice splice : splices) {
            int need = 1 + ResourceVersionSplice.varintSize(splice.objectLength()) + splice.objectLength();
            if (len + need > buf.length) {
                sink.write(buf, 0, len);
                len = 0;
                if (need > buf.length) {
                    buf = new byte[need];
                }
            }
            buf[len++] = 2 << 3 | ProtoReader.LENGTH_DELIMITED;
            len = ResourceVersionSplice.writeVarint(buf, len, splice.objectLength());
            len = splice.writeObject(buf, len);
        }
        byte[] tail = PROTOBUF_TAIL;
        if (len + tail.length > buf.length) {
            sink.write(buf, 0, len);
            len = 0;
        }
        System.arraycopy(tail, 0, buf, len, tail.length);
        len += tail.length;
        sink.write(buf, 0, len);
    }
}
