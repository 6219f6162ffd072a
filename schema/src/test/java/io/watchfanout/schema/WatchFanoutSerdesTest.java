package io.watchfanout.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class WatchFanoutSerdesTest {

    @Test
    void roundTripsEventsRecords() {
        Serde<EventsRecord> serde = WatchFanoutSerdes.eventsRecord();
        EventsRecord record = EventsRecord.newBuilder()
                .setEvent(Event.newBuilder()
                        .setType(Event.Type.PUT)
                        .setKv(KeyValue.newBuilder()
                                .setKey(ByteString.copyFromUtf8("/a"))
                                .setModRevision(3))
                        .setRevision(3)
                        .setCount(1)
                        .setPrevRevision(2))
                .build();
        byte[] bytes = serde.serializer().serialize("t.events", record);
        assertThat(serde.deserializer().deserialize("t.events", bytes)).isEqualTo(record);
    }

    @Test
    void tombstonesStayNull() {
        Serde<StateRecord> serde = WatchFanoutSerdes.stateRecord();
        assertThat(serde.serializer().serialize("t.state", null)).isNull();
        assertThat(serde.deserializer().deserialize("t.state", null)).isNull();
        StateRecord checkpoint = StateRecord.newBuilder()
                .setCheckpoint(StateCheckpoint.newBuilder().setRevision(9).setEventsOffset(40))
                .build();
        assertThat(serde.deserializer()
                        .deserialize("t.state", serde.serializer().serialize("t.state", checkpoint)))
                .isEqualTo(checkpoint);
    }

    @Test
    void undecodableBytesFailLoudly() {
        assertThatThrownBy(() -> WatchFanoutSerdes.eventsRecord()
                        .deserializer()
                        .deserialize("t.events", new byte[] {(byte) 0xff, (byte) 0xff, 0x01}))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("t.events")
                .hasMessageContaining("watchfanout.v1.EventsRecord");
    }
}
