package io.watchfanout.ingester.support;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.ingester.topics.StateRetention;
import io.watchfanout.schema.StateRecordDeserializer;
import io.watchfanout.schema.StateScan;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads a whole state topic, read_committed, as a rebuilding reader does: last value per key; and,
 * as every reader of the state topic must, only trusts a read that took less than half the topic's
 * {@code delete.retention.ms} ({@link StateScan}).
 */
public final class StateTopicDump {
    private StateTopicDump() {}

    /** The state topic read to its end: key-values and the last checkpoint. */
    public record State(Map<ByteString, KeyValue> kvs, StateCheckpoint checkpoint) {}

    /**
     * Partition 0 of {@code topic} from its beginning to the end offset at the start of the read.
     *
     * @throws AssertionError when the read does not reach the end in 60 s, or took too long to be
     *     trusted
     */
    public static State read(String bootstrap, String topic) {
        StateScan scan = StateScan.begin(deleteRetention(bootstrap, topic));
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<ByteString, KeyValue> kvs = new HashMap<>();
        StateCheckpoint checkpoint = StateCheckpoint.getDefaultInstance();
        try (KafkaConsumer<byte[], StateRecord> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new StateRecordDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (consumer.position(tp) < end) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("could not read " + topic + " to its end offset " + end);
                }
                for (ConsumerRecord<byte[], StateRecord> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.key().length == 0) {
                        checkpoint = r.value().getCheckpoint();
                    } else if (r.value() == null) {
                        kvs.remove(ByteString.copyFrom(r.key()));
                    } else {
                        kvs.put(ByteString.copyFrom(r.key()), r.value().getKv());
                    }
                }
            }
        }
        scan.retentionNow(deleteRetention(bootstrap, topic));
        if (!scan.trustworthy()) {
            throw new AssertionError(scan.outlived(topic, 1));
        }
        return new State(kvs, checkpoint);
    }

    private static Duration deleteRetention(String bootstrap, String topic) {
        return StateRetention.deleteRetention(
                bootstrap, KafkaClientSettings.NONE, topic, "state-topic-dump", Duration.ofSeconds(30));
    }
}
