package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(KafkaExtension.class)
class KafkaBrokerTest {

    @Test
    void transactionalProduceAndReadCommittedConsume(KafkaBroker kafka, TestInfo info) throws Exception {
        String topic = TopicPrefixes.unique(info) + ".events";
        createTopic(kafka, topic);
        produceInTransaction(kafka, topic, List.of(new byte[] {1, 2, 3}), info);
        List<ConsumerRecord<String, byte[]>> records = readAll(kafka, topic, 1);
        assertThat(records).hasSize(1);
        assertThat(records.get(0).value()).containsExactly(1, 2, 3);
    }

    @Test
    void transactionOverFourMebibytesWithMultiMebibyteRecords(KafkaBroker kafka, TestInfo info) throws Exception {
        String topic = TopicPrefixes.unique(info) + ".events";
        createTopic(kafka, topic);
        List<byte[]> values = new ArrayList<>();
        for (int size : new int[] {5 << 20, 1536 << 10, 1536 << 10}) {
            byte[] value = new byte[size];
            ThreadLocalRandom.current().nextBytes(value);
            values.add(value);
        }
        produceInTransaction(kafka, topic, values, info);
        List<ConsumerRecord<String, byte[]>> records = readAll(kafka, topic, values.size());
        assertThat(records).hasSize(values.size());
        for (int i = 0; i < values.size(); i++) {
            assertThat(records.get(i).value()).isEqualTo(values.get(i));
        }
    }

    @Test
    void restartAndKillKeepCommittedRecords(KafkaBroker kafka, TestInfo info) throws Exception {
        String topic = TopicPrefixes.unique(info) + ".events";
        createTopic(kafka, topic);
        produceInTransaction(kafka, topic, List.of(new byte[] {7}), info);
        String bootstrap = kafka.bootstrapServers();
        long pid = kafka.pid();

        kafka.restart(); // SIGTERM (controlled shutdown), start on the same data and ports
        assertThat(kafka.bootstrapServers()).isEqualTo(bootstrap);
        assertThat(kafka.pid()).isNotEqualTo(pid);
        assertThat(readAll(kafka, topic, 1)).extracting(ConsumerRecord::value).containsExactly(new byte[] {7});

        kafka.kill(); // SIGKILL: a crash
        assertThat(kafka.isAlive()).isFalse();
        kafka.start(); // leaves the shared broker running, as KafkaExtension asks
        produceInTransaction(kafka, topic, List.of(new byte[] {8}), info);
        assertThat(readAll(kafka, topic, 2))
                .extracting(ConsumerRecord::value)
                .containsExactly(new byte[] {7}, new byte[] {8});
    }

    static void createTopic(KafkaBroker kafka, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
    }

    static void produceInTransaction(KafkaBroker kafka, String topic, List<byte[]> values, TestInfo info) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TopicPrefixes.unique(info));
        config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 16 << 20);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        try (KafkaProducer<String, byte[]> producer =
                new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer())) {
            producer.initTransactions(); // times out unless the transaction state log fits one broker
            producer.beginTransaction();
            for (int i = 0; i < values.size(); i++) {
                producer.send(new ProducerRecord<>(topic, "key-" + i, values.get(i)));
            }
            producer.commitTransaction();
        }
    }

    static List<ConsumerRecord<String, byte[]>> readAll(KafkaBroker kafka, String topic, int expected) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        TopicPartition partition = new TopicPartition(topic, 0);
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(Set.of(partition));
            consumer.seekToBeginning(Set.of(partition));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            // Caught up means the records expected, and position >= the end offset (transaction
            // markers take offsets too). The end offset is read again each time: a committed
            // transaction's marker reaches the partition after commitTransaction returns, and until
            // then a read_committed end offset (the last stable offset) stays before its records.
            long endOffset = consumer.endOffsets(Set.of(partition)).get(partition);
            while ((records.size() < expected || consumer.position(partition) < endOffset)
                    && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                endOffset = consumer.endOffsets(Set.of(partition)).get(partition);
            }
            assertThat(consumer.position(partition)).isGreaterThanOrEqualTo(endOffset);
        }
        assertThat(records).hasSize(expected);
        return records;
    }
}
