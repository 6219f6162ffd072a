package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.frame.JsonBuffer;
import java.util.ArrayList;
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
 * <p>Not thread-safe: one instance per response.
 */
public final class KubeListWriter {
    /** Where the bytes of a list go (a response channel), in order. */
    public interface Sink {
        /** Takes {@code buf[off, off + len)}; the bytes may be reused once it returns. */
        void write(byte[] buf, int off, int len);
    }

    /** One stored object of the page and the revision it was last modified at. */
    public record Item(byte[] value, long modRevision) {}

    /**
     * Renders one item of a page in the list's form, on demand, so that the page is written item by
     * item (and items rendered before, e.g. memoized per event, can be handed over as they are).
     */
    public interface ItemBytes<T> {
        /** The item's bytes: a JSON object without kind and apiVersion, or a bare typed protobuf message. */
        byte[] bytes(T item) throws UndecodableObjectException;
    }

    private static final int FLUSH_BYTES = 64 * 1024;
    private static final byte[] MAGIC = {'k', '8', 's', 0};

    private final KubeSchema schema;
    private final ProtoJsonWriter writer;

    /** A writer of lists of objects described by {@code schema}. */
    public KubeListWriter(KubeSchema schema, ProtoJsonWriter writer) {
        this.schema = schema;
        this.writer = writer;
    }

    /**
     * A buffer holding a JSON list's start, up to its first item: kind, apiVersion and the list's
     * metadata ({@code continue} and {@code remainingItemCount} only with a next page).
     */
    private static JsonBuffer listHead(
            KubeResource resource, long resourceVersion, String continueToken, long remainingItemCount) {
        JsonBuffer out = new JsonBuffer(FLUSH_BYTES + 1024);
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
        return out.ascii("},\"items\":[");
    }

    /**
     * Writes a JSON list page.
     *
     * @param continueToken the next page's token, or null on the last page
     * @param remainingItemCount written when {@code >= 0} and there is a next page
     * @return the number of fields unknown to the schema across the items
     * @throws UndecodableObjectException naming the key-less item that cannot be rendered; the
     *     caller answers with a Status naming its key (bytes already sunk are then a broken
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
        JsonBuffer out = listHead(resource, resourceVersion, continueToken, remainingItemCount);
        int unknown = 0;
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                out.raw(',');
            }
            Item item = items.get(i);
            StoredObject object = StoredObject.of(item.value(), 0, item.value().length);
            switch (object.encoding()) {
                case PROTOBUF ->
                    unknown += writer.writeObject(
                            out,
                            schema.type(object.apiVersion(), object.kind())
                                    .orElseThrow(() -> new UndecodableObjectException(
                                            "no schema for " + object.apiVersion() + " " + object.kind())),
                            null,
                            null,
                            item.value(),
                            object.rawOffset(),
                            object.rawLength(),
                            item.modRevision());
                case JSON -> {
                    byte[] line = KubeWatchFrames.jsonStoredObject(item.value(), item.modRevision());
                    out.bytes(line, 0, line.length);
                }
                default -> throw KubeWatchFrames.undecodable(object);
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

    /**
     * Writes a JSON list page whose items {@code render} makes one at a time, each written out
     * before the next is made: memory holds one item and at most 64 KiB of output.
     *
     * @throws UndecodableObjectException from {@code render}; bytes already sunk are then a broken
     *     response
     */
    public <T> void json(
            KubeResource resource,
            List<T> items,
            ItemBytes<T> render,
            long resourceVersion,
            String continueToken,
            long remainingItemCount,
            Sink sink)
            throws UndecodableObjectException {
        JsonBuffer out = listHead(resource, resourceVersion, continueToken, remainingItemCount);
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                out.raw(',');
            }
            byte[] item = render.bytes(items.get(i));
            if (out.length() + item.length > FLUSH_BYTES) {
                sink.write(out.array(), 0, out.length());
                out.reset();
            }
            if (item.length > FLUSH_BYTES) {
                sink.write(item, 0, item.length);
            } else {
                out.bytes(item, 0, item.length);
            }
        }
        out.ascii("]}");
        sink.write(out.array(), 0, out.length());
    }

    /**
     * Writes a protobuf list page of already rendered items (bare typed messages with their
     * resourceVersion set, e.g. {@link ResourceVersionSplice#object()}); the lengths come from the
     * items, so nothing is planned twice.
     */
    public void protobufRendered(
            KubeResource resource,
            List<byte[]> objects,
            long resourceVersion,
            String continueToken,
            long remaining,
            Sink sink) {
        long itemsLength = 0;
        for (byte[] o : objects) {
            itemsLength += 1 + ResourceVersionSplice.varintSize(o.length) + o.length;
        }
        writeProtobufHead(resource, itemsLength, resourceVersion, continueToken, remaining, sink);
        byte[] head = new byte[16];
        for (byte[] o : objects) {
            head[0] = 2 << 3 | ProtoReader.LENGTH_DELIMITED;
            int len = ResourceVersionSplice.writeVarint(head, 1, o.length);
            sink.write(head, 0, len);
            sink.write(o, 0, o.length);
        }
        sink.write(PROTOBUF_TAIL, 0, PROTOBUF_TAIL.length);
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
     * @throws UndecodableObjectException if an item is not a protobuf object (custom resources have
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
        for (Item item : items) {
            StoredObject object = StoredObject.of(item.value(), 0, item.value().length);
            if (!object.isProtobuf()) {
                throw KubeWatchFrames.undecodable(object);
            }
            ResourceVersionSplice splice =
                    ResourceVersionSplice.of(item.value(), 0, item.value().length, object, item.modRevision());
            splices.add(splice);
            itemsLength += 1 + ResourceVersionSplice.varintSize(splice.objectLength()) + splice.objectLength();
        }
        writeProtobufHead(resource, itemsLength, resourceVersion, continueToken, remainingItemCount, sink);

        byte[] buf = new byte[FLUSH_BYTES];
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
