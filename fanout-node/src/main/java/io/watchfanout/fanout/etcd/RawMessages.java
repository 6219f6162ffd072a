package io.watchfanout.fanout.etcd;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * grpc's marshaller of a message as its raw bytes, never parsed: what {@link EtcdForwarder}
 * relays to etcd, and what a client uses to send bytes no protobuf library would write.
 * Stateless and thread-safe.
 */
public final class RawMessages implements MethodDescriptor.Marshaller<byte[]> {
    /** The one instance. */
    public static final RawMessages MARSHALLER = new RawMessages();

    private RawMessages() {}

    @Override
    public InputStream stream(byte[] value) {
        return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
        try {
            return stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
