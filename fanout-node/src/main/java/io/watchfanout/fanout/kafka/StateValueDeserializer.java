package io.watchfanout.fanout.kafka;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import io.watchfanout.fanout.watch.ValueArena;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateRecord;
import java.nio.ByteBuffer;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * The rebuild's deserializer of {@code <prefix>.state} values: parses the {@link StateRecord}
 * straight from the fetched bytes (Kafka's {@link ByteBuffer} of the record, no array of its own)
 * and stores a key-value's value in the {@link ValueArena} and its key in an array of its own, so
 * that what the rebuild keeps references nothing of the fetch and nothing large is left for young
 * collections to copy. A tombstone becomes {@code null}.
 *
 * <p>Bytes that are not a {@code StateRecord} raise {@link SerializationException}, which the
 * consumer reports as a {@code RecordDeserializationException} with the partition and offset
 * (docs/ARCHITECTURE.md, invariant 8: the rebuild stops).
 *
 * <p>Public for the memory benchmark, which loads a core as the rebuild does.
 *
 * <p>Not thread-safe (the arena is not): one consumer, used from its polling thread.
 */
public final class StateValueDeserializer implements Deserializer<StateValue> {
    private final ValueArena arena;

    /** @param arena where the values go */
    public StateValueDeserializer(ValueArena arena) {
        this.arena = arena;
    }

    @Override
    public StateValue deserialize(String topic, byte[] data) {
        return data == null ? null : deserialize(topic, null, ByteBuffer.wrap(data));
    }

    @Override
    public StateValue deserialize(String topic, Headers headers, ByteBuffer data) {
        if (data == null) {
            return null;
        }
        int size = data.remaining();
        StateRecord record;
        try {
            // Aliased: the parsed strings are views of the fetched bytes, copied out below.
            CodedInputStream in = CodedInputStream.newInstance(data.duplicate());
            in.enableAliasing(true);
            record = StateRecord.parser().parseFrom(in);
            in.checkLastTagWas(0);
        } catch (InvalidProtocolBufferException e) {
            throw new SerializationException(
                    "record of topic " + topic + " (" + size + " bytes) is not a valid watchfanout.v1.StateRecord: "
                            + e.getMessage(),
                    e);
        }
        if (!record.hasKv()) {
            return new StateValue(null, null, record);
        }
        KeyValue aliased = record.getKv();
        byte[] key = aliased.getKey().toByteArray();
        ByteString keyString = UnsafeByteOperations.unsafeWrap(key);
        KeyValue kv = aliased.toBuilder()
                .setKey(keyString)
                .setValue(arena.copy(keyString, aliased.getValue()))
                .build();
        return new StateValue(key, kv, null);
    }
}
