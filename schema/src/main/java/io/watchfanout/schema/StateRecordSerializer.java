package io.watchfanout.schema;

import io.watchfanout.schema.v1.StateRecord;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Serializer of the state topic's values, named so that it can be configured by class
 * name. {@code null} is a tombstone. Thread-safe and stateless.
 */
public final class StateRecordSerializer implements Serializer<StateRecord> {
    @Override
    public byte[] serialize(String topic, StateRecord record) {
        return record == null ? null : record.toByteArray();
    }
}
