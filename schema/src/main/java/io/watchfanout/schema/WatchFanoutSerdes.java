package io.watchfanout.schema;

import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.StateRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * Kafka {@link Serde}s for the topics watch-fanout writes, for plain consumers and for
 * Kafka Streams applications.
 *
 * <ul>
 *   <li>{@code <prefix>.events}: key {@link Serdes#ByteArray()} (the etcd key; empty for
 *       progress and resync records), value {@link #eventsRecord()}.
 *   <li>{@code <prefix>.state}: key {@link Serdes#ByteArray()} (the etcd key; the empty
 *       key holds the checkpoint), value {@link #stateRecord()} ({@code null} for a
 *       tombstone).
 * </ul>
 *
 * <p>The returned serdes are thread-safe and stateless.
 */
public final class WatchFanoutSerdes {
    private WatchFanoutSerdes() {}

    /** The value serde of the events topic. */
    public static Serde<EventsRecord> eventsRecord() {
        return Serdes.serdeFrom(new EventsRecordSerializer(), new EventsRecordDeserializer());
    }

    /** The value serde of the state topic. */
    public static Serde<StateRecord> stateRecord() {
        return Serdes.serdeFrom(new StateRecordSerializer(), new StateRecordDeserializer());
    }

    /** The name of the events topic for a topic prefix: {@code <prefix>.events}. */
    public static String eventsTopic(String topicPrefix) {
        return topicPrefix + ".events";
    }

    /** The name of the state topic for a topic prefix: {@code <prefix>.state}. */
    public static String stateTopic(String topicPrefix) {
        return topicPrefix + ".state";
    }
}
