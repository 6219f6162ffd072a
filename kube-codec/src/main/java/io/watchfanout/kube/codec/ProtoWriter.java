package io.watchfanout.kube.codec;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Builds the few small protobuf messages the node makes itself (bookmarks, Status, envelopes),
 * field by field. Not for stored objects, which are spliced ({@link ResourceVersionSplice}).
 *
 * <p>Not thread-safe: one instance per message.
 */
final class ProtoWriter {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    ProtoWriter string(int field, String value) {
        return bytes(field, value.getBytes(StandardCharsets.UTF_8));
    }

    ProtoWriter bytes(int field, byte[] value) {
        varint(field << 3 | ProtoReader.LENGTH_DELIMITED);
        varint(value.length);
        out.write(value, 0, value.length);
        return this;
    }

    ProtoWriter message(int field, ProtoWriter message) {
        return bytes(field, message.toByteArray());
    }

    ProtoWriter varint(int field, long value) {
        varint(field << 3 | ProtoReader.VARINT);
        varint(value);
        return this;
    }

    private void varint(long v) {
        while ((v & ~0x7fL) != 0) {
            out.write((int) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    byte[] toByteArray() {
        return out.toByteArray();
    }
}
