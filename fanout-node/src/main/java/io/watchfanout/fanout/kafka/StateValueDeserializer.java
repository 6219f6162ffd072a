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
    /** The read position of {@link #keyValueRecord} in the record's buffer (absolute). */
    private int pos;

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
     * field with absolute reads of the fetched buffer into one {@link KeyValue}: no parser object,
     * no view of the value, no parsed message to rebuild around the arena's copy. Null for
     * anything else (a checkpoint, unknown or repeated fields, an unexpected wire type, a varint
     * or length that runs past its message), which {@link #parsed} then reads the general way, so
     * that nothing the schema allows is lost and a malformed record gets protobuf's own error.
     */
    private StateValue keyValueRecord(ByteBuffer data) {
        int end = data.limit();
        pos = data.position();
        if (pos >= end || data.get(pos++) != KV_TAG) {
            return null;
        }
        int kvLength = length(data, end);
        if (kvLength < 0 || pos + kvLength != end) {
            return null; // malformed, or more fields after the kv: a merge the general parser does
        }
        byte[] key = null;
        int valueOffset = 0;
        int valueLength = 0;
        long createRevision = 0;
        long modRevision = 0;
        long version = 0;
        long lease = 0;
        int seen = 0;
        while (pos < end) {
            long tag = varint(data, end);
            int field = (int) (tag >>> 3);
            if (pos < 0
                    || (tag >>> 32) != 0
                    || field < KeyValue.KEY_FIELD_NUMBER
                    || field > KeyValue.LEASE_FIELD_NUMBER
                    || (seen & (1 << field)) != 0
                    || (tag & 7) != WIRE_TYPES[field]) {
                return null;
            }
            seen |= 1 << field;
            if (WIRE_TYPES[field] == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                int length = length(data, end);
                if (length < 0) {
                    return null;
                }
                if (field == KeyValue.KEY_FIELD_NUMBER) {
                    key = new byte[length];
                    data.get(pos, key);
                } else {
                    valueOffset = pos;
                    valueLength = length;
                }
                pos += length;
                continue;
            }
            long number = varint(data, end);
            if (pos < 0) {
                return null;
            }
            switch (field) {
                case KeyValue.CREATE_REVISION_FIELD_NUMBER -> createRevision = number;
                case KeyValue.MOD_REVISION_FIELD_NUMBER -> modRevision = number;
                case KeyValue.VERSION_FIELD_NUMBER -> version = number;
                default -> lease = number;
            }
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
                .setValue(arena.copy(keyString, data, valueOffset, valueLength))
                .setLease(lease)
                .build();
        return new StateValue(key, kv, null);
    }

    /**
     * The length prefix at {@link #pos} of a length-delimited field, moving {@link #pos} past it;
     * -1 unless it is a well-formed varint and that many bytes remain before {@code end}.
     */
    private int length(ByteBuffer data, int end) {
        long length = varint(data, end);
        return pos < 0 || length < 0 || length > end - pos ? -1 : (int) length;
    }

    /**
     * The base-128 varint at {@link #pos} (as protobuf's int64: ten bytes at most), moving
     * {@link #pos} past it; {@link #pos} is -1 afterwards when it does not end before {@code end}.
     */
    private long varint(ByteBuffer data, int end) {
        long result = 0;
        for (int shift = 0; shift < 64 && pos < end; shift += 7) {
            byte b = data.get(pos++);
            result |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return result;
            }
        }
        pos = -1;
        return -1;
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
