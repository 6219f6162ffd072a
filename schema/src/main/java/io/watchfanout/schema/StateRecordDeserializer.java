package io.watchfanout.schema;

import io.watchfanout.schema.v1.StateRecord;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Deserializer of the state topic's values, named so that it can be configured by class
 * name. A tombstone becomes {@code null}; undecodable bytes raise
 * {@link org.apache.kafka.common.errors.SerializationException}. Thread-safe and stateless.
 */
public final class StateRecordDeserializer implements Deserializer<StateRecord> {
    private final ProtobufDeserializer<StateRecord> delegate =
            new ProtobufDeserializer<>(StateRecord.parser(), "watchfanout.v1.StateRecord");

    @Override
    public StateRecord deserialize(String topic, byte[] data) {
        return delegate.deserialize(topic, data);
    }
}
