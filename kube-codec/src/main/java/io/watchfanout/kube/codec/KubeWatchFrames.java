package io.watchfanout.kube.codec;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.Descriptors.Descriptor;
import io.watchfanout.common.JsonBuffer;
import io.watchfanout.kube.codec.resources.KubeResource;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The frames of a Kubernetes watch stream, each made once per event and encoding and then shared
 * by every watcher (invariant 6), in kube-apiserver's two stream forms:
 * <ul>
 *   <li>JSON: one {@code {"type":…,"object":{…}}} per line;
 *   <li>protobuf ({@code application/vnd.kubernetes.protobuf;stream=watch}): a 4-byte big-endian
 *       length and a bare {@code meta.v1.WatchEvent{1: type, 2: RawExtension{1: raw}}} whose raw is
 *       the object's full envelope ({@code k8s\0} + {@code runtime.Unknown}), as client-go expects.
 * </ul>
 * An object's {@code resourceVersion} is the revision the frame stands for: the modification's,
 * or for a DELETED event the deletion's (kube-apiserver's watch cache does the same).
 *
 * <p>Thread-safe: stateless apart from the shared {@link ProtoJsonWriter}.
 */
public final class KubeWatchFrames {
    /** The annotation of the bookmark that ends a watch-list's initial events. */
    public static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";

    private static final byte[] MAGIC = {'k', '8', 's', 0};

    private final KubeSchema schema;
    private final ProtoJsonWriter writer = ProtoJsonWriter.create();

    /** Frames of objects described by {@code schema}. */
    public KubeWatchFrames(KubeSchema schema) {
        this.schema = schema;
    }

    /** Watch event types, as on the wire. */
    public enum EventType {
        ADDED,
        MODIFIED,
        DELETED,
        BOOKMARK,
        ERROR
    }

    /**
     * The JSON line of an event of the stored object {@code value[off, off + len)}.
     *
     * @return the frame, newline included, plus the number of fields the schema did not know
     * @throws UndecodableObjectException if the value is not an object the node can render
     */
    public Frame json(EventType type, byte[] value, int off, int len, long resourceVersion)
            throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, off, len);
        JsonBuffer out = new JsonBuffer(len * 2 + 64);
        out.ascii("{\"type\":\"").ascii(type.name()).ascii("\",\"object\":");
        int unknown = 0;
        switch (object.encoding()) {
            case PROTOBUF ->
                unknown = writer.writeObject(
                        out,
                        type(object),
                        object.apiVersion(),
                        object.kind(),
                        value,
                        object.rawOffset(),
                        object.rawLength(),
                        resourceVersion);
            case JSON -> {
                byte[] rendered = jsonStoredObject(Arrays.copyOfRange(value, off, off + len), resourceVersion);
                out.bytes(rendered, 0, rendered.length);
            }
            default -> throw undecodable(object);
        }
        out.ascii("}\n");
        return new Frame(Arrays.copyOf(out.array(), out.length()), unknown);
    }

    /**
     * The protobuf frame of an event of the stored protobuf object {@code value[off, off + len)}:
     * sizes computed first, one array of the exact length written once.
     *
     * @throws UndecodableObjectException if the value is not a protobuf envelope (custom resources
     *     are JSON and have no protobuf form, as in kube-apiserver) or is malformed
     */
    public byte[] protobuf(EventType type, byte[] value, int off, int len, long resourceVersion)
            throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, off, len);
        if (!object.isProtobuf()) {
            throw undecodable(object);
        }
        ResourceVersionSplice splice = ResourceVersionSplice.of(value, off, len, object, resourceVersion);
        int envelope = splice.envelopeLength();
        byte[] typeName = type.name().getBytes(StandardCharsets.US_ASCII);
        int rawExtension = 1 + ResourceVersionSplice.varintSize(envelope) + envelope;
        int event = 1
                + ResourceVersionSplice.varintSize(typeName.length)
                + typeName.length
                + 1
                + ResourceVersionSplice.varintSize(rawExtension)
                + rawExtension;
        byte[] frame = new byte[4 + event];
        int pos = writeLength(frame, event);
        pos = writeEventHead(frame, pos, typeName, rawExtension);
        frame[pos++] = 1 << 3 | ProtoReader.LENGTH_DELIMITED;
        pos = ResourceVersionSplice.writeVarint(frame, pos, envelope);
        pos = splice.writeEnvelope(frame, pos);
        assert pos == frame.length;
        return frame;
    }

    /**
     * The JSON line of an event of the stored object's metadata alone, a
     * {@link PartialObjectMetadata} (a watch with {@code as=PartialObjectMetadata}).
     *
     * @return the frame, newline included, plus the number of ObjectMeta fields the schema did not know
     * @throws UndecodableObjectException if the value is not an object the node can render
     */
    public static Frame metadataJson(EventType type, byte[] value, int off, int len, long resourceVersion)
            throws UndecodableObjectException {
        JsonBuffer out = new JsonBuffer(Math.min(len, 4096) + 64);
        out.ascii("{\"type\":\"").ascii(type.name()).ascii("\",\"object\":");
        int unknown = PartialObjectMetadata.writeJson(out, value, off, len, resourceVersion);
        out.ascii("}\n");
        return new Frame(Arrays.copyOf(out.array(), out.length()), unknown);
    }

    /**
     * The protobuf frame of an event of the stored protobuf object's metadata alone: its object
     * the {@link PartialObjectMetadata} envelope.
     *
     * @throws UndecodableObjectException if the value is not a protobuf envelope or is malformed
     */
    public static byte[] metadataProtobuf(EventType type, byte[] value, int off, int len, long resourceVersion)
            throws UndecodableObjectException {
        return protobufFrame(type.name(), PartialObjectMetadata.protobufEnvelope(value, off, len, resourceVersion));
    }

    /**
     * A BOOKMARK's JSON line: an empty object of the watched kind holding only its
     * resourceVersion, and the {@value #INITIAL_EVENTS_END} annotation when it ends a watch-list's
     * initial events.
     */
    public static byte[] jsonBookmark(KubeResource resource, long resourceVersion, boolean initialEventsEnd) {
        return jsonBookmark(resource.apiVersion(), resource.kind(), resourceVersion, initialEventsEnd);
    }

    /**
     * As {@link #jsonBookmark(KubeResource, long, boolean)}, an object of {@code apiVersion} and
     * {@code kind}: a metadata-only watch's bookmark is a {@link PartialObjectMetadata}, as
     * kube-apiserver turns every object of such a watch into one.
     */
    public static byte[] jsonBookmark(String apiVersion, String kind, long resourceVersion, boolean initialEventsEnd) {
        JsonBuffer out = new JsonBuffer(160);
        out.ascii("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":")
                .string(kind)
                .ascii(",\"apiVersion\":")
                .string(apiVersion)
                .ascii(",\"metadata\":{\"resourceVersion\":\"")
                .number(resourceVersion)
                .raw('"');
        if (initialEventsEnd) {
            out.ascii(",\"annotations\":{\"").ascii(INITIAL_EVENTS_END).ascii("\":\"true\"}");
        }
        out.ascii("}}}\n");
        return Arrays.copyOf(out.array(), out.length());
    }

    /** A BOOKMARK's protobuf frame: the same object as {@link #jsonBookmark}, in an envelope. */
    public static byte[] protobufBookmark(KubeResource resource, long resourceVersion, boolean initialEventsEnd) {
        return protobufBookmark(resource.apiVersion(), resource.kind(), resourceVersion, initialEventsEnd);
    }

    /** As {@link #jsonBookmark(String, String, long, boolean)}, in protobuf. */
    public static byte[] protobufBookmark(
            String apiVersion, String kind, long resourceVersion, boolean initialEventsEnd) {
        ProtoWriter meta = new ProtoWriter().string(6, Long.toString(resourceVersion));
        if (initialEventsEnd) {
            meta.message(12, new ProtoWriter().string(1, INITIAL_EVENTS_END).string(2, "true"));
        }
        byte[] object = new ProtoWriter().message(1, meta).toByteArray();
        return protobufFrame("BOOKMARK", envelope(apiVersion, kind, object));
    }

    /**
     * An ERROR event's JSON line carrying a {@code meta.v1.Status}, e.g. 410 Expired with
     * {@code too old resource version: X (Y)}, after which kube-apiserver closes the stream.
     */
    public static byte[] jsonError(int code, String reason, String message) {
        JsonBuffer out = new JsonBuffer(160 + message.length());
        out.ascii("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},")
                .ascii("\"status\":\"Failure\",\"message\":")
                .string(message)
                .ascii(",\"reason\":")
                .string(reason)
                .ascii(",\"code\":")
                .number(code)
                .ascii("}}\n");
        return Arrays.copyOf(out.array(), out.length());
    }

    /** An ERROR event's protobuf frame: the same Status as {@link #jsonError}, in an envelope. */
    public static byte[] protobufError(int code, String reason, String message) {
        byte[] status = new ProtoWriter()
                .message(1, new ProtoWriter())
                .string(2, "Failure")
                .string(3, message)
                .string(4, reason)
                .varint(6, code)
                .toByteArray();
        return protobufFrame("ERROR", envelope("v1", "Status", status));
    }

    /** A JSON frame and the number of fields the schema did not know (announced to the client apart). */
    public record Frame(byte[] bytes, int unknownFields) {}

    private Descriptor type(StoredObject object) throws UndecodableObjectException {
        return schema.type(object.apiVersion(), object.kind())
                .orElseThrow(() -> new UndecodableObjectException(
                        "no schema for " + object.apiVersion() + " " + object.kind() + " on this node"));
    }

    /** Why {@code object} has no JSON or protobuf form here (CBOR, encrypted, not an object). */
    public static UndecodableObjectException undecodable(StoredObject object) {
        return new UndecodableObjectException(
                switch (object.encoding()) {
                    case ENCRYPTED -> "encrypted at rest (" + object.detail() + ") and not decrypted by this node";
                    case CBOR -> "stored as CBOR, which this node does not read";
                    case JSON -> "stored as JSON, which has no protobuf form";
                    default -> object.detail();
                });
    }

    /**
     * A JSON-stored object (custom resources, CRDs) with its resourceVersion set. Parsed and
     * written again: such objects carry no schema, and their number is small next to the
     * built-ins'.
     */
    public static byte[] jsonStoredObject(byte[] value, long resourceVersion) throws UndecodableObjectException {
        return jsonStoredTree(value, resourceVersion).toString().getBytes(StandardCharsets.UTF_8);
    }

    /** As {@link #jsonStoredObject}, the object as a tree, for a caller that changes it further. */
    static JsonObject jsonStoredTree(byte[] value, long resourceVersion) throws UndecodableObjectException {
        JsonElement parsed;
        try {
            parsed = JsonParser.parseString(new String(value, StandardCharsets.UTF_8));
        } catch (JsonParseException e) {
            throw new UndecodableObjectException("invalid JSON: " + e.getMessage());
        }
        if (!parsed.isJsonObject()) {
            throw new UndecodableObjectException("JSON that is not an object");
        }
        JsonObject object = parsed.getAsJsonObject();
        CrdConversion.toV1(object);
        JsonElement meta = object.get("metadata");
        if (meta == null || !meta.isJsonObject()) {
            meta = new JsonObject();
            object.add("metadata", meta);
        }
        meta.getAsJsonObject().addProperty("resourceVersion", Long.toString(resourceVersion));
        return object;
    }

    private static byte[] envelope(String apiVersion, String kind, byte[] object) {
        byte[] unknown = new ProtoWriter()
                .message(1, new ProtoWriter().string(1, apiVersion).string(2, kind))
                .bytes(2, object)
                .string(3, "")
                .string(4, "")
                .toByteArray();
        byte[] out = new byte[MAGIC.length + unknown.length];
        System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
        System.arraycopy(unknown, 0, out, MAGIC.length, unknown.length);
        return out;
    }

    private static byte[] protobufFrame(String type, byte[] envelope) {
        byte[] event = new ProtoWriter()
                .string(1, type)
                .message(2, new ProtoWriter().bytes(1, envelope))
                .toByteArray();
        byte[] frame = new byte[4 + event.length];
        writeLength(frame, event.length);
        System.arraycopy(event, 0, frame, 4, event.length);
        return frame;
    }

    private static int writeLength(byte[] frame, int length) {
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
        return 4;
    }

    private static int writeEventHead(byte[] frame, int pos, byte[] typeName, int rawExtension) {
        frame[pos++] = 1 << 3 | ProtoReader.LENGTH_DELIMITED;
        pos = ResourceVersionSplice.writeVarint(frame, pos, typeName.length);
        System.arraycopy(typeName, 0, frame, pos, typeName.length);
        pos += typeName.length;
        frame[pos++] = 2 << 3 | ProtoReader.LENGTH_DELIMITED;
        return ResourceVersionSplice.writeVarint(frame, pos, rawExtension);
    }
}
