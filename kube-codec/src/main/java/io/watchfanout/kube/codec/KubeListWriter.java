package io.watchfanout.kube.codec;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.watchfanout.common.JsonBuffer;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Writes one page of a Kubernetes list in kube-apiserver's forms, streamed through a bounded
 * buffer so that memory grows with an item, not with the list:
 * <ul>
 *   <li>JSON: {@code {"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion",
 *       "continue","remainingItemCount"},"items":[…]}}, items without kind and apiVersion
 *       whether stored as protobuf or JSON (as kube-apiserver's typed lists; a custom resource's
 *       items keep theirs, as in its unstructured lists);
 *   <li>protobuf: {@code k8s\0} + {@code runtime.Unknown{TypeMeta{v1, PodList}, raw = ListMeta
 *       (field 1) + items (field 2, each the stored typed message with its resourceVersion)}}, all
 *       lengths computed before the first byte is written;
 *   <li>metadata only ({@code as=PartialObjectMetadataList}): a {@code meta.k8s.io/v1}
 *       {@code PartialObjectMetadataList} in JSON or protobuf, each item a
 *       {@link PartialObjectMetadata} (in JSON with its kind and apiVersion, as kube-apiserver
 *       sets them).
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

    /** The forms of a list's items. */
    public enum Form {
        /** The object without kind and apiVersion (a custom resource's keeps them). */
        JSON(false, false),
        /** The typed message with its resourceVersion. */
        PROTOBUF(true, false),
        /** The object's {@link PartialObjectMetadata} in JSON. */
        METADATA_JSON(false, true),
        /** The object's bare {@link PartialObjectMetadata} message. */
        METADATA_PROTOBUF(true, true);

        private final boolean protobuf;
        private final boolean metadata;

        Form(boolean protobuf, boolean metadata) {
            this.protobuf = protobuf;
            this.metadata = metadata;
        }

        /** Whether the items are protobuf messages. */
        public boolean protobuf() {
            return protobuf;
        }

        /** Whether the items are the objects' metadata alone. */
        public boolean metadata() {
            return metadata;
        }
    }

    /**
     * An item rendered earlier, kept where its stored object was written (the node memoizes it
     * on the watch event that wrote the object, as that event's frames are): {@link
     * #renderItem} made its bytes. Implementations are thread-safe.
     */
    public interface Memo {
        /**
         * The item in {@code form}, as {@link #renderItem} renders it (JSON forms: 4 bytes of
         * unknown-field count, then the item); read from its position without moving it. Empty
         * when the object could not be rendered (the list renders it again to report why).
         */
        ByteBuffer item(Form form);
    }

    /**
     * One stored object of the page, {@code value[offset, offset + length)} (read, never written:
     * it may be the cache's own bytes), and the revision it was last modified at.
     */
    public record Item(byte[] value, int offset, int length, long modRevision, Memo memo, String unreadable) {
        /** A whole array's object, without a memo of its item. */
        public Item(byte[] value, long modRevision) {
            this(value, 0, value.length, modRevision, null, null);
        }

        /**
         * The cached key-value's object, opened if it is encrypted at rest ({@link AtRest}), its
         * plain bytes viewed where the cache holds them. A value that cannot be opened becomes an
         * item whose {@code unreadable} says why, reported when the list reaches it.
         *
         * @param memo where the rendered item is kept for every later list (the PUT that wrote
         *     {@code kv} while in the history window), else null
         */
        public static Item of(KeyValue kv, Memo memo) {
            try {
                StoredBytes v = AtRest.open(kv);
                return new Item(v.array, v.offset, v.length, kv.getModRevision(), memo, null);
            } catch (UndecodableObjectException e) {
                return new Item(new byte[0], 0, 0, kv.getModRevision(), null, e.getMessage());
            }
        }
    }

    private static final KubeListWriter STANDARD = new KubeListWriter(KubeSchema.standard(), ProtoJsonWriter.create());

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

    /** A writer of lists of objects described by {@code schema}; items with a {@link Memo} are taken from it. */
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
        return json(
                resource.apiVersion(),
                resource.listKind(),
                Form.JSON,
                items,
                resourceVersion,
                continueToken,
                remainingItemCount,
                sink);
    }

    /**
     * Writes a JSON {@code PartialObjectMetadataList} page: the objects' metadata alone, as
     * {@link #json(KubeResource, List, long, String, long, Sink)} otherwise.
     *
     * @return the number of ObjectMeta fields unknown to the schema across the items
     * @throws UndecodableObjectException with the index of the item that cannot be rendered
     */
    public int metadataJson(
            List<Item> items, long resourceVersion, String continueToken, long remainingItemCount, Sink sink)
            throws UndecodableObjectException {
        return json(
                PartialObjectMetadata.API_VERSION,
                PartialObjectMetadata.LIST_KIND,
                Form.METADATA_JSON,
                items,
                resourceVersion,
                continueToken,
                remainingItemCount,
                sink);
    }

    private int json(
            String apiVersion,
            String listKind,
            Form form,
            List<Item> items,
            long resourceVersion,
            String continueToken,
            long remainingItemCount,
            Sink sink)
            throws UndecodableObjectException {
        JsonBuffer out = JSON_STAGING.get();
        out.reset();
        out.ascii("{\"kind\":")
                .string(listKind)
                .ascii(",\"apiVersion\":")
                .string(apiVersion)
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
            int n;
            ByteBuffer memoized = memoized(item, form);
            if (memoized != null) {
                n = memoized.getInt(memoized.position());
                out.bytes(memoized.position(memoized.position() + 4));
            } else {
                try {
                    n = form.metadata() ? renderMetadataJson(item, out) : renderJson(item, out);
                } catch (UndecodableObjectException e) {
                    throw new UndecodableObjectException(e.getMessage(), i);
                }
            }
            if (n > 0) {
                unknown += n;
                sink.unknownFields(n);
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

    /** Writes one JSON metadata item into {@code out}; returns the ObjectMeta fields unknown to the schema. */
    private static int renderMetadataJson(Item item, JsonBuffer out) throws UndecodableObjectException {
        if (item.unreadable() != null) {
            throw new UndecodableObjectException(item.unreadable());
        }
        return PartialObjectMetadata.writeJson(out, item.value(), item.offset(), item.length(), item.modRevision());
    }

    /** Writes one JSON item into {@code out}; returns the fields unknown to the schema. */
    private int renderJson(Item item, JsonBuffer out) throws UndecodableObjectException {
        if (item.unreadable() != null) {
            throw new UndecodableObjectException(item.unreadable());
        }
        StoredObject object = StoredObject.of(item.value(), item.offset(), item.length());
        switch (object.encoding()) {
            case PROTOBUF -> {
                return writer.writeObject(
                        out,
                        schema.type(object.apiVersion(), object.kind())
                                .orElseThrow(() -> new UndecodableObjectException("no schema for " + object.apiVersion()
                                        + " " + object.kind() + " on this node")),
                        null,
                        null,
                        item.value(),
                        object.rawOffset(),
                        object.rawLength(),
                        item.modRevision());
            }
            case JSON -> {
                JsonObject tree = KubeWatchFrames.jsonStoredTree(
                        Arrays.copyOfRange(item.value(), item.offset(), item.offset() + item.length()),
                        item.modRevision());
                if (isBuiltIn(tree)) {
                    // A typed list's items carry no kind or apiVersion, however the object was
                    // stored; a custom resource's (unstructured) items keep theirs.
                    tree.remove("kind");
                    tree.remove("apiVersion");
                }
                byte[] line = tree.toString().getBytes(StandardCharsets.UTF_8);
                out.bytes(line, 0, line.length);
                return 0;
            }
            default -> throw KubeWatchFrames.undecodable(object);
        }
    }

    /** Whether a JSON-stored object is of a kind the schema types (a built-in), not a custom resource. */
    private boolean isBuiltIn(JsonObject object) {
        JsonElement apiVersion = object.get("apiVersion");
        JsonElement kind = object.get("kind");
        return apiVersion != null
                && kind != null
                && apiVersion.isJsonPrimitive()
                && kind.isJsonPrimitive()
                && schema.type(apiVersion.getAsString(), kind.getAsString()).isPresent();
    }

    private static ResourceVersionSplice splice(Item item) throws UndecodableObjectException {
        if (item.unreadable() != null) {
            throw new UndecodableObjectException(item.unreadable());
        }
        StoredObject object = StoredObject.of(item.value(), item.offset(), item.length());
        if (!object.isProtobuf()) {
            throw KubeWatchFrames.undecodable(object);
        }
        return ResourceVersionSplice.of(item.value(), item.offset(), item.length(), object, item.modRevision());
    }

    /** The item's memo in that form (a view of its own), or null to render it. */
    private static ByteBuffer memoized(Item item, Form form) {
        if (item.memo() == null) {
            return null;
        }
        ByteBuffer b = item.memo().item(form);
        return b.hasRemaining() ? b.duplicate() : null;
    }

    private static final ByteBuffer NOTHING = ByteBuffer.allocate(0).asReadOnlyBuffer();

    /**
     * Renders the stored object of {@code kv} as a list item in {@code form} to keep in a
     * {@link Memo}: in JSON forms 4 bytes of unknown-field count, then the item; in protobuf forms
     * the message with its resourceVersion. An object not renderable gives an empty buffer (the
     * list renders it again to report why). Stateless; thread-safe.
     */
    public static ByteBuffer renderItem(KeyValue kv, Form form) {
        Item item = Item.of(kv, null);
        try {
            if (form.protobuf()) {
                ResourceVersionSplice splice = splice(item);
                boolean metadata = form.metadata();
                byte[] b = new byte[metadata ? splice.metaFieldLength() : splice.objectLength()];
                if (metadata) {
                    splice.writeMetaField(b, 0);
                } else {
                    splice.writeObject(b, 0);
                }
                return ByteBuffer.wrap(b).asReadOnlyBuffer();
            }
            boolean metadata = form.metadata();
            JsonBuffer out = new JsonBuffer(metadata ? 512 : item.length() + item.length() / 2 + 64);
            int unknown = metadata ? renderMetadataJson(item, out) : STANDARD.renderJson(item, out);
            ByteBuffer b = ByteBuffer.allocate(4 + out.length());
            b.putInt(unknown).put(out.array(), 0, out.length()).flip();
            return b.asReadOnlyBuffer();
        } catch (UndecodableObjectException e) {
            return NOTHING;
        }
    }

    /** The magic, the envelope's TypeMeta, and the list's raw up to its first item. */
    private static void writeProtobufHead(
            String apiVersion,
            String listKind,
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
        byte[] typeMeta =
                new ProtoWriter().string(1, apiVersion).string(2, listKind).toByteArray();
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
        protobuf(
                resource.apiVersion(),
                resource.listKind(),
                Form.PROTOBUF,
                items,
                resourceVersion,
                continueToken,
                remainingItemCount,
                sink);
    }

    /**
     * Writes a protobuf {@code PartialObjectMetadataList} page: each item the object's
     * ObjectMeta field alone, as {@link #protobuf(KubeResource, List, long, String, long, Sink)}
     * otherwise.
     *
     * @throws UndecodableObjectException with the item's index, if an item is not a protobuf
     *     object or is malformed
     */
    public void metadataProtobuf(
            List<Item> items, long resourceVersion, String continueToken, long remainingItemCount, Sink sink)
            throws UndecodableObjectException {
        protobuf(
                PartialObjectMetadata.API_VERSION,
                PartialObjectMetadata.LIST_KIND,
                Form.METADATA_PROTOBUF,
                items,
                resourceVersion,
                continueToken,
                remainingItemCount,
                sink);
    }

    private void protobuf(
            String apiVersion,
            String listKind,
            Form form,
            List<Item> items,
            long resourceVersion,
            String continueToken,
            long remainingItemCount,
            Sink sink)
            throws UndecodableObjectException {
        boolean metadata = form.metadata();
        // Each item is either memoized bytes or a planned splice of the stored bytes.
        Object[] planned = new Object[items.size()];
        long itemsLength = 0;
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
            ByteBuffer memoized = memoized(item, form);
            int length;
            if (memoized != null) {
                planned[i] = memoized;
                length = memoized.remaining();
            } else {
                try {
                    ResourceVersionSplice splice = splice(item);
                    planned[i] = splice;
                    length = metadata ? splice.metaFieldLength() : splice.objectLength();
                } catch (UndecodableObjectException e) {
                    throw new UndecodableObjectException(e.getMessage(), i);
                }
            }
            itemsLength += 1 + ResourceVersionSplice.varintSize(length) + length;
        }
        writeProtobufHead(apiVersion, listKind, itemsLength, resourceVersion, continueToken, remainingItemCount, sink);

        byte[] buf = PROTOBUF_STAGING.get();
        int len = 0;
        for (Object item : planned) {
            ResourceVersionSplice splice = item instanceof ResourceVersionSplice r ? r : null;
            ByteBuffer memoized = splice == null ? (ByteBuffer) item : null;
            int length =
                    splice == null ? memoized.remaining() : metadata ? splice.metaFieldLength() : splice.objectLength();
            int need = 1 + ResourceVersionSplice.varintSize(length) + length;
            if (len + need > buf.length) {
                sink.write(buf, 0, len);
                len = 0;
                if (need > buf.length) {
                    buf = new byte[need];
                }
            }
            buf[len++] = 2 << 3 | ProtoReader.LENGTH_DELIMITED;
            len = ResourceVersionSplice.writeVarint(buf, len, length);
            if (splice != null) {
                len = metadata ? splice.writeMetaField(buf, len) : splice.writeObject(buf, len);
            } else {
                memoized.get(memoized.position(), buf, len, length);
                len += length;
            }
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
