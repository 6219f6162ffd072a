package io.watchfanout.ingester.publish;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.ingester.topics.StateRetention;
import io.watchfanout.ingester.topics.TopicReader;
import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.StateRecordDeserializer;
import io.watchfanout.schema.StateScan;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the ingester has published so far, read back from Kafka: the last revision in the
 * events topic (its start point after a restart), the state topic's checkpoint (when
 * retention has emptied the events topic), and — for a resynchronisation — the whole
 * published state of the range.
 *
 * <p>A read of the whole state topic is trusted only if it took less than half the topic's
 * {@code delete.retention.ms} ({@link StateScan}, the rule every reader of the state topic
 * follows); otherwise a tombstone may have vanished before it was read, and the read is made again.
 *
 * <p>Only valid after {@code initTransactions()} of the ingester's own producer: that
 * aborts whatever an earlier instance left open, so the read_committed tail is final.
 *
 * <p>Stateless; each method opens its own consumers.
 */
public final class PublishedLog {
    private static final Logger log = LoggerFactory.getLogger(PublishedLog.class);
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);
    /** Reads of the state topic that took too long, after which {@link #state()} gives up. */
    static final int MAX_STATE_READS = 3;

    private final String bootstrap;
    private final KafkaClientSettings settings;
    private final String eventsTopic;
    private final String stateTopic;
    private final String clientId;

    /**
     * @param bootstrap Kafka bootstrap servers
     * @param settings the {@code --kafka-config} client settings
     * @param eventsTopic the events topic
     * @param stateTopic the state topic
     * @param clientId prefix of the consumers' client ids
     */
    public PublishedLog(
            String bootstrap, KafkaClientSettings settings, String eventsTopic, String stateTopic, String clientId) {
        this.bootstrap = bootstrap;
        this.settings = settings;
        this.eventsTopic = eventsTopic;
        this.stateTopic = stateTopic;
        this.clientId = clientId;
    }

    /**
     * The revision of the last committed record of the events topic, or empty when the
     * topic holds no committed record. Transactions hold whole revisions, so this revision
     * is complete.
     */
    public Optional<Long> lastEventsRevision() {
        try (TopicReader<EventsRecord> reader = tailReader()) {
            return lastEventsRevision(reader);
        }
    }

    /**
     * A reader for {@link #lastEventsRevision(TopicReader)}, to keep open: a standby opens it
     * ahead of its election so that its read of the tail, once elected, needs no new consumer.
     */
    public TopicReader<EventsRecord> tailReader() {
        return new TopicReader<>(bootstrap, settings, clientId + "-tail", new EventsRecordDeserializer());
    }

    /** As {@link #lastEventsRevision()}, with a reader of {@link #tailReader()} the caller owns. */
    public Optional<Long> lastEventsRevision(TopicReader<EventsRecord> reader) {
        long[] bounds = reader.bounds(eventsTopic);
        long begin = bounds[0];
        long end = bounds[1];
        // Step back until a committed record shows up: the tail may be markers or aborted data.
        for (long back = 16; ; back *= 8) {
            long from = Math.max(begin, end - back);
            long[] last = {-1};
            reader.read(eventsTopic, from, end, r -> last[0] = EventsRecords.revision(r.value()), READ_TIMEOUT);
            if (last[0] >= 0) {
                return Optional.of(last[0]);
            }
            if (from == begin) {
                return Optional.empty();
            }
        }
    }

    /** The checkpoint of the state topic, or empty when it has none. */
    public Optional<StateCheckpoint> checkpoint() {
        Map<ByteString, KeyValue> ignored = new HashMap<>();
        return readState(ignored, false);
    }

    /**
     * The published state of the range at the last revision of the events topic: the state
     * topic up to its checkpoint, then the events topic from the checkpoint's offset to its
     * end.
     *
     * @return the key-values by key
     * @throws IllegalStateException when {@link #MAX_STATE_READS} reads of the state topic in a row
     *     took too long to be trusted ({@link StateScan}), or Kafka does not tell the topic's
     *     {@code delete.retention.ms}
     */
    public Map<ByteString, KeyValue> state() {
        Map<ByteString, KeyValue> state = new HashMap<>();
        Optional<StateCheckpoint> checkpoint = Optional.empty();
        for (int read = 1; ; read++) {
            state.clear();
            StateScan scan = StateScan.begin(stateDeleteRetention());
            checkpoint = readState(state, true);
            scan.retentionNow(stateDeleteRetention());
            if (scan.trustworthy()) {
                break;
            }
            String why = scan.outlived(stateTopic, 1);
            if (read == MAX_STATE_READS) {
                throw new IllegalStateException("cannot read the published state in time: " + read
                        + " reads in a row were too slow; the last time, " + why);
            }
            log.warn("reading the published state again ({} of {}): {}", read, MAX_STATE_READS, why);
        }
        long from = checkpoint.map(StateCheckpoint::getEventsOffset).orElse(0L);
        try (TopicReader<EventsRecord> reader =
                new TopicReader<>(bootstrap, settings, clientId + "-events", new EventsRecordDeserializer())) {
            long[] bounds = reader.bounds(eventsTopic);
            reader.read(
                    eventsTopic,
                    Math.max(from, bounds[0]),
                    bounds[1],
                    r -> {
                        if (r.value().hasEvent()) {
                            Event e = r.value().getEvent();
                            if (e.getType() == Event.Type.PUT) {
                                state.put(e.getKv().getKey(), e.getKv());
                            } else {
                                state.remove(e.getKv().getKey());
                            }
                        }
                    },
                    READ_TIMEOUT);
        }
        return state;
    }

    /** The state topic's effective delete.retention.ms now. */
    private Duration stateDeleteRetention() {
        return StateRetention.deleteRetention(bootstrap, settings, stateTopic, clientId + "-admin", READ_TIMEOUT);
    }

    private Optional<StateCheckpoint> readState(Map<ByteString, KeyValue> state, boolean keepKeys) {
        StateCheckpoint[] checkpoint = {null};
        try (TopicReader<StateRecord> reader =
                new TopicReader<>(bootstrap, settings, clientId + "-state", new StateRecordDeserializer())) {
            long[] bounds = reader.bounds(stateTopic);
            reader.read(
                    stateTopic,
                    bounds[0],
                    bounds[1],
                    r -> {
                        if (r.key().length == 0) {
                            if (r.value() != null && r.value().hasCheckpoint()) {
                                checkpoint[0] = r.value().getCheckpoint();
                            }
                        } else if (keepKeys) {
                            ByteString key = ByteString.copyFrom(r.key());
                            if (r.value() == null) {
                                state.remove(key);
                            } else {
                                state.put(key, r.value().getKv());
                            }
                        }
                    },
                    READ_TIMEOUT);
        }
        return Optional.ofNullable(checkpoint[0]);
    }
}
