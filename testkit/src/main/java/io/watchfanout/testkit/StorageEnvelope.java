package io.watchfanout.testkit;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.kubernetes.client.proto.Runtime;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * kube-apiserver's protobuf storage form of a built-in object, as it lies in etcd: the magic
 * bytes {@code k8s\0} ({@code 6b 38 73 00}), then a {@code runtime.Unknown} whose
 * {@code typeMeta} holds the object's apiVersion and kind, whose {@code raw} holds the object's
 * own message (without a TypeMeta inside), and whose {@code contentEncoding} and
 * {@code contentType} are written empty, as Go writes them.
 *
 * <p>For the local stack's demo load, the benchmarks and tests that write objects as
 * kube-apiserver stores them: the messages come from client-java-proto's generated classes
 * ({@code io.kubernetes.client.proto.V1...}), which the caller has on its class path (an optional
 * dependency of this module). Stateless and thread-safe.
 */
public final class StorageEnvelope {
    private static final byte[] MAGIC = {0x6b, 0x38, 0x73, 0x00};

    private StorageEnvelope() {}

    /** The 4 bytes every protobuf value kube-apiserver stores starts with: a new array each call. */
    public static byte[] magic() {
        return MAGIC.clone();
    }

    /**
     * The stored value of {@code object}.
     *
     * @param apiVersion the object's group/version, e.g. {@code v1} or {@code apps/v1}
     * @param kind the object's kind, e.g. {@code Pod}
     * @param object the typed message, e.g. a {@code V1.Pod}
     * @return a new array: the magic bytes and the encoded {@code runtime.Unknown}
     */
    public static byte[] wrap(String apiVersion, String kind, MessageLite object) {
        return wrap(apiVersion, kind, object.toByteString());
    }

    /**
     * The stored value of an object already encoded, e.g. one whose bytes a test shapes itself.
     *
     * @param apiVersion the object's group/version, e.g. {@code v1} or {@code apps/v1}
     * @param kind the object's kind, e.g. {@code ConfigMap}
     * @param raw the encoded typed message, without a TypeMeta inside
     * @return a new array: the magic bytes and the encoded {@code runtime.Unknown}
     */
    public static byte[] wrap(String apiVersion, String kind, ByteString raw) {
        Runtime.Unknown unknown = Runtime.Unknown.newBuilder()
                .setTypeMeta(
                        Runtime.TypeMeta.newBuilder().setApiVersion(apiVersion).setKind(kind))
                .setRaw(raw)
                .setContentEncoding("")
                .setContentType("")
                .build();
        int size = unknown.getSerializedSize();
        byte[] value = new byte[MAGIC.length + size];
        System.arraycopy(MAGIC, 0, value, 0, MAGIC.length);
        CodedOutputStream out = CodedOutputStream.newInstance(value, MAGIC.length, size);
        try {
            unknown.writeTo(out);
            out.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException("an array the encoded size long did not fit the envelope", e);
        }
        return value;
    }
}
