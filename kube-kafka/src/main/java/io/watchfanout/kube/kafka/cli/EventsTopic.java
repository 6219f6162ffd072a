package io.watchfanout.kube.kafka.cli;

import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The events topic's one partition, read with {@code read_committed}: its offsets at the start
 * of the read, where a revision or a time starts, and the records from there on.
 *
 * <p>Offsets are not revisions: progress records, transaction markers and revisions of several
 * events take offsets, but revisions never go down along the partition, which is what the searches
 * rely on.
 *
 * <p>Not thread-safe: one reading thread (a Kafka consumer).
 */
final class EventsTopic implements AutoCloseable {
    static final Duration POLL = Duration.ofMillis(200);

    private final KafkaConsumer<byte[], EventsRecord> consumer;
    private final TopicPartition partition;
    private final String name;
    private final Duration timeout;
    private final long begin;
    private final long end;

    private EventsTopic(
            KafkaConsumer<byte[], EventsRecord> consumer, String name, Duration timeout, long begin, long end) {
        this.consumer = consumer;
        this.partition = new TopicPartition(name, 0);
        this.name = name;
        this.timeout = timeout;
        this.begin = begin;
        this.end = end;
    }

    /**
     * Opens {@code topic} and reads its beginning and end offsets.
     *
     * @param config the consumer's settings (bootstrap servers, security, {@code read_committed})
     * @param timeout how long Kafka may take to answer a metadata request
     * @throws CliException when the topic does not exist or has more than one partition
     */
    static EventsTopic open(Map<String, Object> config, String topic, Duration timeout) {
        KafkaConsumer<byte[], EventsRecord> consumer = new KafkaConsumer<>(
                config,
                Serdes.ByteArray().deserializer(),
                WatchFanoutSerdes.eventsRecord().deserializer());
        try {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, timeout);
            if (partitions == null || partitions.isEmpty()) {
                throw new CliException("topic " + topic + " does not exist (expected: the ingester's events topic; "
                        + "is --topic-prefix right?)");
            }
            if (partitions.size() != 1) {
                throw new CliException("topic " + topic + " has " + partitions.size()
                        + " partitions (expected: 1, as the ingester creates it)");
            }
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            long begin = consumer.beginningOffsets(List.of(tp), timeout).get(tp);
            long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
            return new EventsTopic(consumer, topic, timeout, begin, end);
        } catch (RuntimeException e) {
            consumer.close();
            throw e;
        }
    }

    /** The topic's name. */
    String name() {
        return name;
    }

    /** The first offset still held when the read started. */
    long begin() {
        return begin;
    }

    /** The end offset (last stable offset) when the read started: the records before it are committed. */
    long end() {
        return end;
    }

    /** The first record at {@code offset} or after, before {@code until}; null when there is none. */
    ConsumerRecord<byte[], EventsRecord> recordAt(long offset, long until) {
        if (offset >= until) {
            return null;
        }
        consumer.seek(partition, offset);
        while (consumer.position(partition) < until) {
            for (ConsumerRecord<byte[], EventsRecord> r : consumer.poll(POLL)) {
                return r.offset() < until ? r : null;
            }
        }
        return null;
    }

    /** The revision of the first record held, or -1 when the topic holds none. */
    long firstRevision() {
        ConsumerRecord<byte[], EventsRecord> first = recordAt(begin, end);
        return first == null ? -1 : EventsRecords.revision(first.value());
    }

    /**
     * The first offset whose record has a revision above {@code revision}: every record before it
     * has a revision of at most {@code revision}. A binary search over the offsets held.
     */
    long firstOffsetAbove(long revision) {
        long lo = begin;
        long hi = end;
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            ConsumerRecord<byte[], EventsRecord> r = recordAt(mid, hi);
            if (r != null && EventsRecords.revision(r.value()) <= revision) {
                lo = r.offset() + 1;
            } else {
                // No record from mid to hi, or the first one is above: the answer is at mid or before.
                hi = mid;
            }
        }
        return lo;
    }

    /** The first offset whose record's timestamp (when the ingester received the event) is at or after {@code time}. */
    long firstOffsetAt(Instant time) {
        Map<TopicPartition, OffsetAndTimestamp> found =
                consumer.offsetsForTimes(Map.of(partition, time.toEpochMilli()), timeout);
        OffsetAndTimestamp at = found.get(partition);
        return at == null ? end : Math.max(begin, at.offset());
    }

    /** Reads from {@code offset} on. */
    void seek(long offset) {
        consumer.seek(partition, offset);
    }

    /** The next records, or none after {@link #POLL}. */
    ConsumerRecords<byte[], EventsRecord> poll() {
        return consumer.poll(POLL);
    }

    /** The offset of the next record to read (past transaction markers read so far). */
    long position() {
        return consumer.position(partition, timeout);
    }

    @Override
    public void close() {
        consumer.close();
    }
}
