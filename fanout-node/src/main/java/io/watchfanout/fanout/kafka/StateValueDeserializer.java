package io.watchfanout.fanout.kafka;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.WireFormat;
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
    /** The tag of {@code StateRecord.kv}: field 1, length-delimited. */
    private static final int KV_TAG = StateRecord.KV_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED;
    /** The wire type of each {@link KeyValue} field, by field number (1 to 6). */
    private static final int[] WIRE_TYPES = {
        -1,
        WireFormat.WIRETYPE_LENGTH_DELIMITED,
        WireFormat.WIRETYPE_VARINT,
        WireFormat.WIRETYPE_VARINT,
        WireFormat.WIRETYPE_VARINT,
        WireFormat.WIRETYPE_LENGTH_DELIMITED,
        WireFormat.WIRETYPE_VARINT
    };

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
        try {
            StateValue v = keyValueRecord(data);
            return v != null ? v : parsed(data);
        } catch (InvalidProtocolBufferException e) {
            throw new SerializationException(
                    "record of topic " + topic + " (" + data.remaining()
                            + " bytes) is not a valid watchfanout.v1.StateRecord: " + e.getMessage(),
                    e);
        }
    }

    /**
     * The record as nearly all of them are, a {@code kv} with known fields only, read field by
     * field into one {@link KeyValue}: no parsed message to rebuild around the arena's view. Null
     * for anything else (a checkpoint, unknown or repeated fields, an unexpected wire type), which
     * {@link #parsed} then reads the general way, so that nothing the schema allows is lost.
     */
    private StateValue keyValueRecord(ByteBuffer data) {
        CodedInputStream in = CodedInputStream.newInstance(data.duplicate());
        in.enableAliasing(true);
        try {
            if (in.readTag() != KV_TAG) {
                return null;
            }
            int oldLimit = in.pushLimit(in.readRawVarint32());
            byte[] key = null;
            ByteString value = null;
            long createRevision = 0;
            long modRevision = 0;
            long version = 0;
            long lease = 0;
            int seen = 0;
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                int field = WireFormat.getTagFieldNumber(tag);
                if (field < KeyValue.KEY_FIELD_NUMBER
                        || field > KeyValue.LEASE_FIELD_NUMBER
                        || (seen & (1 << field)) != 0
                        || WireFormat.getTagWireType(tag) != WIRE_TYPES[field]) {
                    return null;
                }
                seen |= 1 << field;
                switch (field) {
                    case KeyValue.KEY_FIELD_NUMBER -> key = in.readByteArray();
                    case KeyValue.CREATE_REVISION_FIELD_NUMBER -> createRevision = in.readInt64();
                    case KeyValue.MOD_REVISION_FIELD_NUMBER -> modRevision = in.readInt64();
                    case KeyValue.VERSION_FIELD_NUMBER -> version = in.readInt64();
                    case KeyValue.VALUE_FIELD_NUMBER -> value = in.readBytes(); // a view of the fetch
                    default -> lease = in.readInt64();
                }
            }
            in.popLimit(oldLimit);
            if (!in.isAtEnd()) {
                return null; // more fields after the kv: a merge the general parser does
            }
            if (key == null) {
                key = new byte[0];
            }
            ByteString keyString = UnsafeByteOperations.unsafeWrap(key);
            KeyValue kv = KeyValue.newBuilder()
                    .setKey(keyString)
                    .setCreateRevision(createRevision)
                    .setModRevision(modRevision)
                    .setVersion(version)
                    .setValue(value == null ? ByteString.EMPTY : arena.copy(keyString, value))
                    .setLease(lease)
                    .build();
            return new StateValue(key, kv, null);
        } catch (java.io.IOException e) {
            return null; // the general parser gives the error its full message
        }
    }

    private StateValue parsed(ByteBuffer data) throws InvalidProtocolBufferException {
        // Aliased: the parsed strings are views of the fetched bytes, copied out below.
        CodedInputStream in = CodedInputStream.newInstance(data.duplicate());
        in.enableAliasing(true);
        StateRecord record = StateRecord.parser().parseFrom(in);
        in.checkLastTagWas(0);
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
