package io.watchfanout.schema;

import io.watchfanout.schema.v1.EventsRecord;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Deserializer of the events topic's values, named so that it can be configured by class
 * name ({@code value.deserializer}). Undecodable bytes raise
 * {@link org.apache.kafka.common.errors.SerializationException}. Thread-safe and stateless.
 */
public final class EventsRecordDeserializer implements Deserializer<EventsRecord> {
    private final ProtobufDeserializer<EventsRecord> delegate =
            new ProtobufDeserializer<>(EventsRecord.parser(), "watchfanout.v1.EventsRecord");

    @Override
    public EventsRecord deserialize(String topic, byte[] data) {
        return delegate.deserialize(topic, data);
    }
}
