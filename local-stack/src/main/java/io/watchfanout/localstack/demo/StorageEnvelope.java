package io.watchfanout.localstack.demo;

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
 * <p>Stateless and thread-safe.
 */
final class StorageEnvelope {
    /** The bytes every protobuf value kube-apiserver stores starts with. */
    static final byte[] MAGIC = {0x6b, 0x38, 0x73, 0x00};

    private StorageEnvelope() {}

    /**
     * The stored value of {@code object}.
     *
     * @param apiVersion the object's group/version, e.g. {@code v1} or {@code apps/v1}
     * @param kind the object's kind, e.g. {@code Pod}
     * @param object the typed message, e.g. a {@code V1.Pod}
     * @return a new array: the magic bytes and the encoded {@code runtime.Unknown}
     */
    static byte[] wrap(String apiVersion, String kind, MessageLite object) {
        Runtime.Unknown unknown = Runtime.Unknown.newBuilder()
                .setTypeMeta(
                        Runtime.TypeMeta.newBuilder().setApiVersion(apiVersion).setKind(kind))
                .setRaw(object.toByteString())
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
