package io.watchfanout.schema;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.util.Objects;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Kafka {@link Deserializer} that parses a protobuf message from its binary wire format.
 * A {@code null} value (a tombstone) becomes {@code null}.
 *
 * <p>Bytes that do not parse raise {@link SerializationException}; a Kafka consumer
 * reports it as a {@code RecordDeserializationException} carrying the partition and
 * offset, and does not move past the record. Readers of watch-fanout topics must treat
 * that as fatal rather than skip the record (docs/ARCHITECTURE.md, invariant 8).
 *
 * <p>The message's {@code bytes} fields (keys, values) alias {@code data} instead of copying
 * it: a 1 KiB value is copied once, by Kafka, not twice. Kafka hands every call a fresh
 * array and never touches it again; a caller that reuses its array must not do so while the
 * message is in use.
 *
 * <p>Thread-safe and stateless.
 *
 * @param <T> the message type
 */
final class ProtobufDeserializer<T extends MessageLite> implements Deserializer<T> {
    private final Parser<T> parser;
    private final String typeName;

    /**
     * @param parser the generated message's parser, e.g. {@code EventsRecord.parser()}
     * @param typeName the message's name, used in error messages
     */
    ProtobufDeserializer(Parser<T> parser, String typeName) {
        this.parser = Objects.requireNonNull(parser, "parser");
        this.typeName = Objects.requireNonNull(typeName, "typeName");
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            CodedInputStream in = CodedInputStream.newInstance(data);
            in.enableAliasing(true);
            T message = parser.parseFrom(in);
            in.checkLastTagWas(0);
            return message;
        } catch (InvalidProtocolBufferException e) {
            throw new SerializationException(
                    "record of topic " + topic + " (" + data.length + " bytes) is not a valid " + typeName + ": "
                            + e.getMessage(),
                    e);
        }
    }
}
