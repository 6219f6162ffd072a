package io.watchfanout.ingester.materializer;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StateProjectionTest {
    private static final String PREFIX = "projection";
    private static final Duration INTERVAL = Duration.ofMillis(StateMaterializer.STATE_COMMIT_INTERVAL_MS);

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], EventsRecord> events;
    private TestOutputTopic<byte[], StateRecord> state;

    @BeforeEach
    void start() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, PREFIX + ".state-materializer");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        driver = new TopologyTestDriver(StateMaterializer.topology(PREFIX), props);
        events = driver.createInputTopic(
                WatchFanoutSerdes.eventsTopic(PREFIX),
                Serdes.ByteArray().serializer(),
                WatchFanoutSerdes.eventsRecord().serializer());
        state = driver.createOutputTopic(
                WatchFanoutSerdes.stateTopic(PREFIX),
                Serdes.ByteArray().deserializer(),
                WatchFanoutSerdes.stateRecord().deserializer());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    /** The events of one revision, numbered. */
    private void revision(long revision, String... keys) {
        for (int i = 0; i < keys.length; i++) {
            KeyValue kv = KeyValue.newBuilder()
                    .setKey(ByteString.copyFromUtf8(keys[i]))
                    .setModRevision(revision)
                    .setValue(ByteString.copyFromUtf8("v" + revision))
                    .build();
            Event e = Event.newBuilder()
                    .setType(Event.Type.PUT)
                    .setKv(kv)
                    .setRevision(revision)
                    .setIndex(i)
                    .setCount(keys.length)
                    .build();
            events.pipeInput(
                    kv.getKey().toByteArray(),
                    EventsRecord.newBuilder().setEvent(e).build());
        }
    }

    /** The checkpoints among the state records written since the last call, in order. */
    private List<StateCheckpoint> checkpoints() {
        return state.readValuesToList().stream()
                .filter(r -> r != null && r.hasCheckpoint())
                .map(StateRecord::getCheckpoint)
                .toList();
    }

    private static StateCheckpoint at(long revision, long eventsOffset) {
        return StateCheckpoint.newBuilder()
                .setRevision(revision)
                .setEventsOffset(eventsOffset)
                .build();
    }

    @Test
    void theFirstRevisionBoundaryIsCheckpointedAtOnce() {
        revision(5, "/a", "/b");

        assertThat(checkpoints()).containsExactly(at(5, 2));
    }

    @Test
    void boundariesWithinAnIntervalWaitForThePunctuation() {
        revision(5, "/a");
        revision(6, "/b");
        revision(7, "/c", "/d");
        assertThat(checkpoints()).containsExactly(at(5, 1));

        driver.advanceWallClockTime(INTERVAL);

        assertThat(checkpoints()).containsExactly(at(7, 4));
    }

    @Test
    void aPunctuationInsideARevisionCheckpointsTheBoundaryBeforeIt() {
        revision(5, "/a");
        revision(6, "/b");
        checkpoints();
        KeyValue first = KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8("/c"))
                .setModRevision(7)
                .build();
        events.pipeInput(
                first.getKey().toByteArray(),
                EventsRecord.newBuilder()
                        .setEvent(Event.newBuilder()
                                .setType(Event.Type.PUT)
                                .setKv(first)
                                .setRevision(7)
                                .setIndex(0)
                                .setCount(2))
                        .build());

        driver.advanceWallClockTime(INTERVAL);

        assertThat(checkpoints()).containsExactly(at(6, 2));
    }

    @Test
    void aBoundaryAnIntervalAfterTheLastCheckpointIsCheckpointedAtOnce() {
        revision(5, "/a");
        driver.advanceWallClockTime(INTERVAL);
        revision(6, "/b");

        assertThat(checkpoints()).containsExactly(at(5, 1), at(6, 2));
    }

    @Test
    void everyKeyValueIsWrittenWhateverTheCheckpoints() {
        revision(5, "/a");
        revision(6, "/a", "/b");

        assertThat(state.readKeyValuesToList().stream()
                        .filter(kv -> kv.value.hasKv())
                        .map(kv -> kv.value.getKv().getValue().toStringUtf8())
                        .toList())
                .containsExactly("v5", "v6", "v6");
    }
}
