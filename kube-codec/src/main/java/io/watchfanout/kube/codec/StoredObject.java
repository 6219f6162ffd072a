package io.watchfanout.kube.codec;

import java.nio.charset.StandardCharsets;

/**
 * What kube-apiserver wrote into one etcd value, found without decoding the object: its storage
 * encoding and, for a protobuf envelope, the {@code apiVersion}, {@code kind} and where the typed
 * message lies in the value.
 *
 * <p>kube-apiserver's storage forms (k8s.io/apimachinery {@code runtime/serializer/protobuf}):
 * <ul>
 *   <li>protobuf: the magic {@code k8s\0} and a {@code runtime.Unknown} message
 *       {@code {1: TypeMeta{1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}}
 *       whose {@code raw} is the typed message (ObjectMeta in its field 1, no TypeMeta inside);
 *   <li>JSON (custom resources, CRDs, clusters run with {@code --storage-media-type=application/json});
 *   <li>CBOR, behind the self-describing tag {@code d9 d9 f7} (an alpha storage format);
 *   <li>encrypted at rest: {@code k8s:enc:<provider>:<version>:<key name>:} and the ciphertext.
 * </ul>
 *
 * @param encoding the storage form
 * @param apiVersion the envelope's apiVersion ({@code PROTOBUF} only, else empty)
 * @param kind the envelope's kind ({@code PROTOBUF} only, else empty)
 * @param rawOffset offset of the typed message in the value ({@code PROTOBUF}), else 0
 * @param rawLength length of the typed message ({@code PROTOBUF}), else the whole value's
 * @param detail why a value is {@code MALFORMED}, or an {@code ENCRYPTED} value's prefix
 *     ({@code k8s:enc:aescbc:v1:key1}), else empty
 */
public record StoredObject(
        StorageEncoding encoding, String apiVersion, String kind, int rawOffset, int rawLength, String detail) {

    /** The storage forms of a value, as told by its first bytes. */
    public enum StorageEncoding {
        PROTOBUF,
        JSON,
        CBOR,
        ENCRYPTED,
        /** A protobuf envelope that does not parse, or bytes of no known form. */
        MALFORMED
    }

    private static final byte[] PROTOBUF_MAGIC = {'k', '8', 's', 0};
    private static final byte[] ENCRYPTED_PREFIX = "k8s:enc:".getBytes(StandardCharsets.US_ASCII);

    /**
     * Reads the form of {@code value[off, off + len)}. Never throws on bad bytes: a value that
     * cannot be read is {@code MALFORMED} with the reason in {@link #detail()}, so that the caller
     * reports it (kube-apiserver answers such an object with an error, never skips it).
     */
    public static StoredObject of(byte[] value, int off, int len) {
        if (startsWith(value, off, len, PROTOBUF_MAGIC)) {
            return envelope(value, off + PROTOBUF_MAGIC.length, len - PROTOBUF_MAGIC.length);
        }
        if (startsWith(value, off, len, ENCRYPTED_PREFIX)) {
            return new StoredObject(StorageEncoding.ENCRYPTED, "", "", off, len, encryptionPrefix(value, off, len));
        }
        if (len >= 3
                && (value[off] & 0xff) == 0xd9
                && (value[off + 1] & 0xff) == 0xd9
                && (value[off + 2] & 0xff) == 0xf7) {
            return new StoredObject(StorageEncoding.CBOR, "", "", off, len, "");
        }
        int first = off;
        while (first < off + len && isJsonSpace(value[first])) {
            first++;
        }
        if (first < off + len && value[first] == '{') {
            return new StoredObject(StorageEncoding.JSON, "", "", off, len, "");
        }
        return malformed(off, len, "neither a protobuf envelope (k8s\\0), JSON, CBOR nor an encrypted value");
    }

    /** A reader of the typed message in {@code value} (the bytes this was read from); {@code PROTOBUF} only. */
    public ProtoReader typed(byte[] value) {
        return new ProtoReader(value, rawOffset, rawOffset + rawLength);
    }

    /** True for a protobuf envelope whose object the node can locate. */
    public boolean isProtobuf() {
        return encoding == StorageEncoding.PROTOBUF;
    }

    private static StoredObject envelope(byte[] value, int start, int len) {
        ProtoReader in = new ProtoReader(value, start, start + len);
        String apiVersion = "";
        String kind = "";
        int rawOffset = -1;
        int rawLength = 0;
        try {
            while (in.hasMore()) {
                int tag = in.readTag();
                int field = tag >>> 3;
                if (field == 1 && (tag & 7) == ProtoReader.LENGTH_DELIMITED) {
                    int typeMetaLength = in.readLength();
                    ProtoReader typeMeta = in.sub(typeMetaLength);
                    while (typeMeta.hasMore()) {
                        int t = typeMeta.readTag();
                        if (t == (1 << 3 | ProtoReader.LENGTH_DELIMITED)) {
                            apiVersion = typeMeta.readString();
                        } else if (t == (2 << 3 | ProtoReader.LENGTH_DELIMITED)) {
                            kind = typeMeta.readString();
                        } else {
                            typeMeta.skip(t);
                        }
                    }
                } else if (field == 2 && (tag & 7) == ProtoReader.LENGTH_DELIMITED) {
                    rawLength = in.readLength();
                    rawOffset = in.position();
                    in.skipBytes(rawLength);
                } else {
                    in.skip(tag);
                }
            }
        } catch (ProtoReader.MalformedException e) {
            return malformed(start, len, "protobuf envelope: " + e.getMessage());
        }
        if (rawOffset < 0 || kind.isEmpty() || apiVersion.isEmpty()) {
            return malformed(start, len, "protobuf envelope without apiVersion, kind or object");
        }
        return new StoredObject(StorageEncoding.PROTOBUF, apiVersion, kind, rawOffset, rawLength, "");
    }

    private static StoredObject malformed(int off, int len, String why) {
        return new StoredObject(StorageEncoding.MALFORMED, "", "", off, len, why);
    }

    private static String encryptionPrefix(byte[] value, int off, int len) {
        // k8s:enc:<provider>:<version>:<key name>: — the prefix names what decrypts the value.
        int colons = 0;
        int end = off;
        for (int i = off; i < off + len && i < off + 256; i++) {
            if (value[i] == ':' && ++colons == 5) {
                end = i;
                break;
            }
        }
        return colons == 5
                ? new String(value, off, end - off, StandardCharsets.US_ASCII)
                : "k8s:enc: (truncated prefix)";
    }

    private static boolean startsWith(byte[] value, int off, int len, byte[] prefix) {
        if (len < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (value[off + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static boolean isJsonSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }
}
