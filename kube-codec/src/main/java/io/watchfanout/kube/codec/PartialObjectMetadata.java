package io.watchfanout.kube.codec;

import com.google.gson.JsonElement;
import com.google.protobuf.Descriptors.Descriptor;
import io.watchfanout.common.JsonBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A stored object's metadata alone, as kube-apiserver answers a read that asks for
 * {@code as=PartialObjectMetadata;g=meta.k8s.io;v=v1} (the garbage collector, the namespace
 * controller and metadata-only informers): a {@code meta.k8s.io/v1} {@code PartialObjectMetadata}
 * holding the object's whole ObjectMeta, with its resourceVersion set, and nothing else.
 * <ul>
 *   <li>JSON: {@code {"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{…}}},
 *       the ObjectMeta written as in the full object;
 *   <li>protobuf: the message {@code {1: ObjectMeta}}, which is the stored typed message's field 1
 *       copied byte for byte (field 6 replaced, see {@link ResourceVersionSplice}), so fields the
 *       node's schema does not know reach the client as stored; in an envelope ({@code k8s\0} +
 *       {@code runtime.Unknown} typed {@code meta.k8s.io/v1 PartialObjectMetadata}) for a get or a
 *       watch event, bare as an item of a {@code PartialObjectMetadataList}.
 * </ul>
 * A custom resource (stored as JSON) has a JSON form only.
 *
 * <p>Stateless and thread-safe.
 */
public final class PartialObjectMetadata {
    /** The apiVersion of the metadata-only forms. */
    public static final String API_VERSION = "meta.k8s.io/v1";
    /** The kind of one object's metadata. */
    public static final String KIND = "PartialObjectMetadata";
    /** The kind of a list of them. */
    public static final String LIST_KIND = "PartialObjectMetadataList";

    private static final int TAG_OBJECT_META = 1 << 3 | ProtoReader.LENGTH_DELIMITED;
    private static final byte[] MAGIC = {'k', '8', 's', 0};
    private static final byte[] TYPE_META =
            new ProtoWriter().string(1, API_VERSION).string(2, KIND).toByteArray();
    private static final Descriptor TYPE = KubeSchema.standard()
            .message("k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata")
            .orElseThrow(() -> new IllegalStateException("the schema has no meta.v1.PartialObjectMetadata"));
    private static final ProtoJsonWriter WRITER = ProtoJsonWriter.create();

    private PartialObjectMetadata() {}

    /**
     * Appends the JSON {@code PartialObjectMetadata} of the stored object {@code value[off, off + len)}.
     *
     * <p>{@code kind} and {@code apiVersion} are always written: kube-apiserver sets them on every
     * PartialObjectMetadata it sends, list items included.
     *
     * @return the number of ObjectMeta fields the schema did not know (left out)
     * @throws UndecodableObjectException if the value is neither a protobuf envelope nor JSON, or
     *     is malformed
     */
    public static int writeJson(JsonBuffer out, byte[] value, int off, int len, long resourceVersion)
            throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, off, len);
        switch (object.encoding()) {
            case PROTOBUF -> {
                int[] meta = metaField(value, object);
                return WRITER.writeObject(out, TYPE, API_VERSION, KIND, value, meta[0], meta[1], resourceVersion);
            }
            case JSON -> {
                JsonElement metadata = KubeWatchFrames.jsonStoredTree(
                                Arrays.copyOfRange(value, off, off + len), resourceVersion)
                        .get("metadata");
                out.ascii("{\"kind\":\"")
                        .ascii(KIND)
                        .ascii("\",\"apiVersion\":\"")
                        .ascii(API_VERSION)
                        .ascii("\",\"metadata\":");
                byte[] json = metadata.toString().getBytes(StandardCharsets.UTF_8);
                out.bytes(json, 0, json.length);
                out.raw('}');
                return 0;
            }
            default -> throw KubeWatchFrames.undecodable(object);
        }
    }

    /**
     * The bare protobuf {@code PartialObjectMetadata} message of the stored protobuf object (a
     * list item), planned without copying: write it with {@link ResourceVersionSplice#writeMetaField}.
     *
     * @throws UndecodableObjectException if the value is not a protobuf envelope or is malformed
     */
    public static ResourceVersionSplice protobufMessage(byte[] value, int off, int len, long resourceVersion)
            throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, off, len);
        if (!object.isProtobuf()) {
            throw KubeWatchFrames.undecodable(object);
        }
        return ResourceVersionSplice.of(value, off, len, object, resourceVersion);
    }

    /**
     * The protobuf envelope of the stored protobuf object's metadata (a get's answer, a watch
     * event's object), in one array of the exact length.
     *
     * @throws UndecodableObjectException if the value is not a protobuf envelope or is malformed
     */
    public static byte[] protobufEnvelope(byte[] value, int off, int len, long resourceVersion)
            throws UndecodableObjectException {
        ResourceVersionSplice splice = protobufMessage(value, off, len, resourceVersion);
        int raw = splice.metaFieldLength();
        // runtime.Unknown{1: TypeMeta, 2: raw, 3: "", 4: ""}, as kube-apiserver writes it.
        int unknown = 1
                + ResourceVersionSplice.varintSize(TYPE_META.length)
                + TYPE_META.length
                + 1
                + ResourceVersionSplice.varintSize(raw)
                + raw
                + 4;
        byte[] out = new byte[MAGIC.length + unknown];
        System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
        int pos = MAGIC.length;
        out[pos++] = 1 << 3 | ProtoReader.LENGTH_DELIMITED;
        pos = ResourceVersionSplice.writeVarint(out, pos, TYPE_META.length);
        System.arraycopy(TYPE_META, 0, out, pos, TYPE_META.length);
        pos += TYPE_META.length;
        out[pos++] = 2 << 3 | ProtoReader.LENGTH_DELIMITED;
        pos = ResourceVersionSplice.writeVarint(out, pos, raw);
        pos = splice.writeMetaField(out, pos);
        out[pos++] = 3 << 3 | ProtoReader.LENGTH_DELIMITED;
        out[pos++] = 0;
        out[pos++] = 4 << 3 | ProtoReader.LENGTH_DELIMITED;
        out[pos++] = 0;
        assert pos == out.length;
        return out;
    }

    /** Where the stored ObjectMeta field lies in the value: {offset, length}, empty when it has none. */
    private static int[] metaField(byte[] value, StoredObject object) throws UndecodableObjectException {
        try {
            ProtoReader raw = object.typed(value);
            while (raw.hasMore()) {
                int start = raw.position();
                int tag = raw.readTag();
                if (tag == TAG_OBJECT_META) {
                    raw.skipBytes(raw.readLength());
                    return new int[] {start, raw.position() - start};
                }
                raw.skip(tag);
            }
            return new int[] {object.rawOffset(), 0};
        } catch (ProtoReader.MalformedException e) {
            throw new UndecodableObjectException("not a valid " + object.kind() + " message: " + e.getMessage());
        }
    }
}
