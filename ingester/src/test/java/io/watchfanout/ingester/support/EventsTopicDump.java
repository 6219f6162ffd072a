package io.watchfanout.ingester.support;

import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads a whole events topic, read_committed, the way a plain Kafka consumer user would. */
public final class EventsTopicDump {
    private EventsTopicDump() {}

    /** Every committed record of partition 0 of {@code topic}, in offset order. */
    public static List<ConsumerRecord<byte[], EventsRecord>> read(String bootstrap, String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, EventsRecordDeserializer.class.getName());
        List<ConsumerRecord<byte[], EventsRecord>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], EventsRecord> consumer = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            Map<TopicPartition, Long> end = consumer.endOffsets(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (consumer.position(tp) < end.get(tp)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("could not read " + topic + " to its end offset " + end.get(tp));
                }
                for (ConsumerRecord<byte[], EventsRecord> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(r);
                }
            }
        }
        return out;
    }
}
