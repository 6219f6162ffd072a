package io.watchfanout.fanout.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.watchfanout.fanout.watch.ValueArena;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

/** The rebuild's reading of state records: the same key-values as protobuf's own parser, every case of the schema. */
class StateValueDeserializerTest {
    private final ValueArena arena = new ValueArena(1 << 16);
    private final StateValueDeserializer deserializer = new StateValueDeserializer(arena);

    private StateValue read(byte[] bytes) {
        // Inside a larger buffer, as Kafka hands a record over: the position and limit count.
        byte[] around = new byte[bytes.length + 20];
        System.arraycopy(bytes, 0, around, 7, bytes.length);
        return deserializer.deserialize("t.state", null, ByteBuffer.wrap(around, 7, bytes.length));
    }

    @Test
    void keyValuesReadFieldByFieldEqualProtobufsParse() throws Exception {
        Random random = new Random(7);
        for (int i = 0; i < 2000; i++) {
            KeyValue.Builder b = KeyValue.newBuilder();
            if (random.nextInt(10) > 0) {
                b.setKey(bytes(random, 1 + random.nextInt(80)));
            }
            if (random.nextInt(10) > 0) {
                b.setValue(bytes(random, random.nextInt(10) == 0 ? 40_000 : random.nextInt(2000)));
            }
            b.setCreateRevision(random.nextInt(3) == 0 ? 0 : random.nextLong() >>> random.nextInt(63));
            b.setModRevision(random.nextLong() >>> random.nextInt(63));
            b.setVersion(random.nextInt(3) == 0 ? 0 : random.nextInt(1000));
            b.setLease(random.nextInt(3) == 0 ? 0 : random.nextLong());
            KeyValue kv = b.build();
            byte[] bytes = StateRecord.newBuilder().setKv(kv).build().toByteArray();
            StateValue v = read(bytes);
            assertThat(v.kv()).as("record %d", i).isEqualTo(kv);
            assertThat(v.key()).isEqualTo(kv.getKey().toByteArray());
            assertThat(v.other()).isNull();
            if (kv.getValue().size() > 0 && kv.getValue().size() <= (1 << 15)) {
                assertThat(arena.holds(v.kv().getValue())).isTrue();
            }
        }
    }

    @Test
    void fieldsOutOfOrderUnknownOrRepeatedGoTheGeneralWayAndKeepEverything() throws Exception {
        KeyValue kv = KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8("/registry/pods/a"))
                .setValue(ByteString.copyFromUtf8("v"))
                .setModRevision(9)
                .setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(
                                15,
                                UnknownFieldSet.Field.newBuilder().addVarint(3).build())
                        .build())
                .build();
        StateValue unknown = read(StateRecord.newBuilder().setKv(kv).build().toByteArray());
        assertThat(unknown.kv()).isEqualTo(kv);
        assertThat(unknown.kv().getUnknownFields().hasField(15)).isTrue();

        // Two kv fields merge (protobuf's rule for a repeated message field): the later mod_revision wins.
        byte[] first = StateRecord.newBuilder().setKv(kv).build().toByteArray();
        byte[] second = StateRecord.newBuilder()
                .setKv(KeyValue.newBuilder().setModRevision(10))
                .build()
                .toByteArray();
        byte[] both = new byte[first.length + second.length];
        System.arraycopy(first, 0, both, 0, first.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        assertThat(read(both).kv()).isEqualTo(StateRecord.parseFrom(both).getKv());
        assertThat(read(both).kv().getModRevision()).isEqualTo(10);

        // A field written twice inside the kv: the last wins, as in protobuf.
        byte[] twice = KeyValue.newBuilder().setModRevision(1).build().toByteArray();
        byte[] again = KeyValue.newBuilder().setModRevision(2).build().toByteArray();
        byte[] inner = new byte[twice.length + again.length];
        System.arraycopy(twice, 0, inner, 0, twice.length);
        System.arraycopy(again, 0, inner, twice.length, again.length);
        byte[] record = new byte[2 + inner.length];
        record[0] = 0x0a; // field 1, length-delimited
        record[1] = (byte) inner.length;
        System.arraycopy(inner, 0, record, 2, inner.length);
        assertThat(read(record).kv().getModRevision()).isEqualTo(2);
    }

    @Test
    void aCheckpointIsKeptAsItsRecordAndAnEmptyKeyValueIsAKeyValue() {
        StateRecord checkpoint = StateRecord.newBuilder()
                .setCheckpoint(StateCheckpoint.newBuilder().setRevision(42))
                .build();
        StateValue c = read(checkpoint.toByteArray());
        assertThat(c.kv()).isNull();
        assertThat(c.other()).isEqualTo(checkpoint);

        StateValue empty = read(StateRecord.newBuilder()
                .setKv(KeyValue.getDefaultInstance())
                .build()
                .toByteArray());
        assertThat(empty.kv()).isEqualTo(KeyValue.getDefaultInstance());
        assertThat(empty.key()).isEmpty();
    }

    @Test
    void bytesThatAreNoStateRecordAreAnErrorNamingTheTopic() {
        byte[] truncated = StateRecord.newBuilder()
                .setKv(KeyValue.newBuilder()
                        .setKey(ByteString.copyFromUtf8("/k"))
                        .setValue(ByteString.copyFromUtf8("value")))
                .build()
                .toByteArray();
        byte[] cut = java.util.Arrays.copyOf(truncated, truncated.length - 3);
        assertThatThrownBy(() -> read(cut))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("record of topic t.state")
                .hasMessageContaining("is not a valid watchfanout.v1.StateRecord");
        assertThatThrownBy(() -> read(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff}))
                .isInstanceOf(SerializationException.class);
    }

    @Test
    void everyTruncationAndAnOverlongVarintIsAnErrorAsProtobufSaysAndNothingReadsPastTheRecord() {
        byte[] whole = StateRecord.newBuilder()
                .setKv(KeyValue.newBuilder()
                        .setKey(ByteString.copyFromUtf8("/registry/pods/ns/a"))
                        .setCreateRevision(300)
                        .setModRevision(70_000_000_000L)
                        .setVersion(2)
                        .setValue(ByteString.copyFromUtf8("a value of some length"))
                        .setLease(-1))
                .build()
                .toByteArray();
        for (int n = 1; n < whole.length; n++) {
            // the bytes after the cut are still in the buffer's array: a read past the record's
            // limit would find them and succeed
            byte[] around = new byte[n + whole.length + 7];
            System.arraycopy(whole, 0, around, 7, whole.length);
            ByteBuffer cut = ByteBuffer.wrap(around, 7, n);
            int length = n;
            assertThatThrownBy(() -> deserializer.deserialize("t.state", null, cut))
                    .as("cut at %d of %d", length, whole.length)
                    .isInstanceOf(SerializationException.class);
        }
        byte[] overlong = {0x0a, 13, 0x10, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 0};
        assertThatThrownBy(() -> read(overlong)).isInstanceOf(SerializationException.class);
    }

    private static ByteString bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return ByteString.copyFrom(b);
    }
}
