package io.watchfanout.ingester.topics;

import io.watchfanout.common.KafkaClientSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads one partition of a topic, read_committed, with {@code assign()} (no consumer
 * group), from an offset to the end offset captured at the start.
 *
 * <p>"The end" is reached when the position is at or past the end offset, not when the last
 * record seen has offset end − 1: transaction markers take offsets (docs/ARCHITECTURE.md, "Notes").
 *
 * <p>Not thread-safe; one reader per thread.
 *
 * @param <V> the value type
 */
public final class TopicReader<V> implements AutoCloseable {
    private final KafkaConsumer<byte[], V> consumer;

    /**
     * @param bootstrap Kafka bootstrap servers
     * @param settings the {@code --kafka-config} client settings
     * @param clientId the client id, for broker logs
     * @param valueDeserializer the topic's value deserializer
     */
    public TopicReader(
            String bootstrap, KafkaClientSettings settings, String clientId, Deserializer<V> valueDeserializer) {
        Properties props = new Properties();
        settings.applyTo(props);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), valueDeserializer);
    }

    /** The first and the end offset of partition 0 of {@code topic}, read_committed. */
    public long[] bounds(String topic) {
        TopicPartition tp = new TopicPartition(topic, 0);
        Map<TopicPartition, Long> begin = consumer.beginningOffsets(List.of(tp));
        Map<TopicPartition, Long> end = consumer.endOffsets(List.of(tp));
        return new long[] {begin.get(tp), end.get(tp)};
    }

    /**
     * Reads partition 0 of {@code topic} from {@code fromOffset} up to {@code endOffset}.
     *
     * @param sink receives each record in offset order
     * @param timeout gives up when no progress is made for this long
     * @throws TimeoutException when the end is not reached in time
     * @throws org.apache.kafka.common.errors.RecordDeserializationException for an
     *     undecodable record (never skipped)
     */
    public void read(
            String topic, long fromOffset, long endOffset, Consumer<ConsumerRecord<byte[], V>> sink, Duration timeout) {
        TopicPartition tp = new TopicPartition(topic, 0);
        consumer.assign(List.of(tp));
        consumer.seek(tp, fromOffset);
        long lastProgress = System.nanoTime();
        while (consumer.position(tp) < endOffset) {
            long before = consumer.position(tp);
            for (ConsumerRecord<byte[], V> r : consumer.poll(Duration.ofMillis(200))) {
                if (r.offset() < endOffset) {
                    sink.accept(r);
                }
            }
            if (consumer.position(tp) > before) {
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > timeout.toNanos()) {
                throw new TimeoutException("reading " + topic + " stalled at offset " + consumer.position(tp) + " of "
                        + endOffset + " for " + timeout.toSeconds() + " s");
            }
        }
    }

    @Override
    public void close() {
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(1)));
    }
}
