package io.watchfanout.kube.kafka.cli;

import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The stored key-values under a key prefix as they were at a past revision, read from Kafka alone:
 * the state topic's snapshot (the watched range at its checkpoint's revision), brought to the head
 * of the events topic by the events after the checkpoint, then taken back to the revision by undoing
 * every later event with its {@code prev_kv} (a PUT of a new key is undone by removing the key; any
 * other event by restoring the key-value before it). Resync entries carry {@code prev_kv} too, so
 * they are undone the same way, back to what the topic published before the resync.
 *
 * <p>The events topic must still hold every event after the revision: the oldest revision available
 * is the revision of its first record (retention removes the older ones).
 *
 * <p>Not thread-safe: one call at a time.
 */
final class StateAt {
    /**
     * The key-values at a revision.
     *
     * @param revision the revision they are at
     * @param keyValues by key, in key order
     */
    record Snapshot(long revision, NavigableMap<String, KeyValue> keyValues) {}

    private final Map<String, Object> config;
    private final String topicPrefix;
    private final String keyPrefix;
    private final Duration timeout;
    private final CatchUp.Factory progress;

    /**
     * @param config consumer settings (bootstrap servers, security, {@code read_committed})
     * @param topicPrefix the topics' prefix: reads {@code <prefix>.state} and {@code <prefix>.events}
     * @param keyPrefix only keys under this prefix are kept (kube-apiserver's {@code --etcd-prefix})
     * @param timeout how long Kafka may take to answer a metadata request
     * @param progress the progress line of the read of the events topic from a given offset
     */
    StateAt(
            Map<String, Object> config,
            String topicPrefix,
            String keyPrefix,
            Duration timeout,
            CatchUp.Factory progress) {
        this.config = config;
        this.topicPrefix = topicPrefix;
        this.keyPrefix = keyPrefix;
        this.timeout = timeout;
        this.progress = progress;
    }

    /**
     * The key-values at {@code revision}, or, when {@code time} is given, at the last revision whose
     * events were all received by then.
     *
     * @param revision a revision, ignored when {@code time} is not null
     * @param time a point in time, or null
     * @throws CliException when the events topic no longer holds what is needed (naming the oldest
     *     revision available), the revision is ahead of the topic, or the state topic has no usable checkpoint
     */
    Snapshot at(long revision, Instant time) {
        String eventsTopic = WatchFanoutSerdes.eventsTopic(topicPrefix);
        try (EventsTopic events = EventsTopic.open(config, eventsTopic, timeout)) {
            long oldest = events.firstRevision();
            if (time != null) {
                long after = events.firstOffsetAt(time.plusMillis(1));
                ConsumerRecord<byte[], EventsRecord> next = events.recordAt(after, events.end());
                revision = next == null ? Long.MAX_VALUE : EventsRecords.revision(next.value()) - 1;
            }
            if (oldest >= 0 && revision < oldest) {
                throw new CliException((time == null ? "revision " + revision : time + " (revision " + revision + ")")
                        + " is older than the oldest revision " + eventsTopic + " holds, " + oldest
                        + " (retention removed the events before it)");
            }
            TreeMap<String, KeyValue> state = new TreeMap<>();
            StateCheckpoint checkpoint = readState(WatchFanoutSerdes.stateTopic(topicPrefix), state);
            long from;
            if (checkpoint != null) {
                from = checkpoint.getEventsOffset();
            } else if (state.isEmpty() && events.begin() == 0) {
                from = 0;
            } else {
                throw new CliException(WatchFanoutSerdes.stateTopic(topicPrefix)
                        + " holds no checkpoint and " + eventsTopic + " no longer starts at its first record: "
                        + "the state cannot be rebuilt (is the ingester's state materializer running?)");
            }
            if (from < events.begin()) {
                throw new CliException("the checkpoint of " + WatchFanoutSerdes.stateTopic(topicPrefix)
                        + " needs " + eventsTopic + " from offset " + from + ", which retention removed (it begins at "
                        + events.begin() + "): wait for the state materializer to move on");
            }
            long head = checkpoint == null ? 0 : checkpoint.getRevision();
            long start = Math.min(from, revision == Long.MAX_VALUE ? from : events.firstOffsetAbove(revision));
            List<Event> later = new ArrayList<>();
            events.seek(start);
            CatchUp catchUp = progress.from(eventsTopic, start);
            while (events.position() < events.end()) {
                for (ConsumerRecord<byte[], EventsRecord> r : events.poll()) {
                    if (r.offset() >= events.end()) {
                        break;
                    }
                    head = EventsRecords.revision(r.value());
                    if (!r.value().hasEvent()) {
                        continue;
                    }
                    Event e = r.value().getEvent();
                    if (r.offset() >= from) {
                        apply(state, e);
                    }
                    if (e.getRevision() > revision) {
                        later.add(e);
                    }
                }
                catchUp.at(events.position(), events.end());
            }
            catchUp.done();
            if (revision == Long.MAX_VALUE) {
                revision = head;
            } else if (revision > head) {
                throw new CliException(
                        "revision " + revision + " is ahead of the newest revision " + eventsTopic + " holds, " + head);
            }
            for (int i = later.size() - 1; i >= 0; i--) {
                undo(state, later.get(i));
            }
            return new Snapshot(revision, state);
        }
    }

    /** The key-values of the state topic as read to its end offsets (at its checkpoint's revision, or a little after). */
    NavigableMap<String, KeyValue> stored() {
        TreeMap<String, KeyValue> state = new TreeMap<>();
        readState(WatchFanoutSerdes.stateTopic(topicPrefix), state);
        return state;
    }

    private void apply(Map<String, KeyValue> state, Event e) {
        String key = e.getKv().getKey().toStringUtf8();
        if (!key.startsWith(keyPrefix)) {
            return;
        }
        if (e.getType() == Event.Type.DELETE) {
            state.remove(key);
        } else {
            state.put(key, e.getKv());
        }
    }

    private void undo(Map<String, KeyValue> state, Event e) {
        String key = e.getKv().getKey().toStringUtf8();
        if (!key.startsWith(keyPrefix)) {
            return;
        }
        if (e.hasPrevKv()) {
            state.put(key, e.getPrevKv());
        } else {
            state.remove(key);
        }
    }

    /**
     * Reads the state topic to its end offsets into {@code state} (keys under the key prefix only).
     *
     * @return its checkpoint, or null when the topic does not exist or holds none
     */
    private StateCheckpoint readState(String topic, Map<String, KeyValue> state) {
        try (KafkaConsumer<byte[], StateRecord> consumer = new KafkaConsumer<>(
                config,
                Serdes.ByteArray().deserializer(),
                WatchFanoutSerdes.stateRecord().deserializer())) {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, timeout);
            if (partitions == null || partitions.isEmpty()) {
                return null;
            }
            List<TopicPartition> tps = partitions.stream()
                    .map(p -> new TopicPartition(topic, p.partition()))
                    .toList();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(tps, timeout));
            StateCheckpoint checkpoint = null;
            while (end.entrySet().stream().anyMatch(p -> consumer.position(p.getKey(), timeout) < p.getValue())) {
                for (ConsumerRecord<byte[], StateRecord> r : consumer.poll(EventsTopic.POLL)) {
                    if (r.key() == null || r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) {
                        continue;
                    }
                    String key = new String(r.key(), StandardCharsets.UTF_8);
                    if (r.key().length == 0) {
                        checkpoint = r.value() == null || !r.value().hasCheckpoint()
                                ? null
                                : r.value().getCheckpoint();
                    } else if (!key.startsWith(keyPrefix)) {
                        continue;
                    } else if (r.value() == null || !r.value().hasKv()) {
                        state.remove(key);
                    } else {
                        state.put(key, r.value().getKv());
                    }
                }
            }
            return checkpoint;
        }
    }
}
