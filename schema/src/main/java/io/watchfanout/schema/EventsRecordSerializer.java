package io.watchfanout.schema;

import io.watchfanout.schema.v1.EventsRecord;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Serializer of the events topic's values, named so that it can be configured by class
 * name ({@code value.serializer}). Thread-safe and stateless.
 */
public final class EventsRecordSerializer implements Serializer<EventsRecord> {
    @Override
    public byte[] serialize(String topic, EventsRecord record) {
        return record == null ? null : record.toByteArray();
    }
}
