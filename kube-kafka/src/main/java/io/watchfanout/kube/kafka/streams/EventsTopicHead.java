package io.watchfanout.kube.kafka.streams;

import com.google.protobuf.InvalidProtocolBufferException;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;

/**
 * The newest etcd revision in the events topic: the highest revision (of an event or a progress
 * record) among the last committed records of each partition, read with {@code read_committed} so
 * that an open or aborted ingester transaction does not count. The ingester writes revisions in
 * increasing order, so the last records hold the newest; progress records keep it current while
 * etcd is idle.
 *
 * <p>Not thread-safe: one thread reads (its consumer is Kafka's, which is single-threaded).
 */
final class EventsTopicHead implements AutoCloseable {
    /**
     * Records read back from each partition's end. More than one: the last offsets of a
     * transactional topic are commit markers, and a resync marker carries no revision.
     */
    static final int TAIL_RECORDS = 16;

    private final Consumer<byte[], byte[]> consumer;
    private final String topic;
    private List<TopicPartition> partitions = List.of();

    /**
     * @param consumer a consumer with {@code isolation.level=read_committed}, no group and byte-array
     *     deserializers; owned by this object from now on
     * @param topic the events topic
     */
    EventsTopicHead(Consumer<byte[], byte[]> consumer, String topic) {
        this.consumer = consumer;
        this.topic = topic;
    }

    /**
     * Reads the newest revision.
     *
     * @param timeout how long the read may take in all
     * @return the highest revision among the last records, 0 when the topic does not exist, is
     *     empty, or its last records carry no revision (or were not read within {@code timeout})
     * @throws org.apache.kafka.common.KafkaException when Kafka cannot be asked
     */
    long read(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (partitions.isEmpty()) {
            List<TopicPartition> found = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, timeout)) {
                found.add(new TopicPartition(topic, p.partition()));
            }
            if (found.isEmpty()) {
                return 0;
            }
            partitions = List.copyOf(found);
            consumer.assign(partitions);
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, remaining(deadline));
        Map<TopicPartition, Long> starts = consumer.beginningOffsets(partitions, remaining(deadline));
        List<TopicPartition> pending = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            long end = ends.getOrDefault(tp, 0L);
            long start = starts.getOrDefault(tp, 0L);
            if (end > start) {
                consumer.seek(tp, Math.max(start, end - TAIL_RECORDS));
                pending.add(tp);
            }
        }
        consumer.pause(partitions);
        consumer.resume(pending);
        long newest = 0;
        while (!pending.isEmpty() && System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(remaining(deadline))) {
                newest = Math.max(newest, revisionOf(r.value()));
            }
            pending.removeIf(tp -> consumer.position(tp) >= ends.get(tp));
        }
        return newest;
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    private static long revisionOf(byte[] value) {
        try {
            return KubeTopicsProcessor.revisionOf(EventsRecord.parseFrom(value == null ? new byte[0] : value));
        } catch (InvalidProtocolBufferException e) {
            // Not an events record: the application writes it to the errors topic; no revision here.
            return 0;
        }
    }

    /** Closes the consumer. */
    @Override
    public void close() {
        try {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        } catch (InterruptException e) {
            Thread.currentThread().interrupt();
        }
    }
}
