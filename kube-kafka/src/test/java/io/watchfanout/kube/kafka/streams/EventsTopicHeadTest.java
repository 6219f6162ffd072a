package io.watchfanout.kube.kafka.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The newest revision at the events topic's end, written as the ingester writes it: in
 * transactions (commit markers take offsets), some aborted, with more records than the tail read.
 */
@ExtendWith(KafkaExtension.class)
class EventsTopicHeadTest {
    /** Generous: a loaded machine; the read returns as soon as it reached the end. */
    private static final Duration READ = Duration.ofSeconds(30);

    @Test
    void theNewestCommittedRevisionOfTheTopicsEnd(KafkaBroker kafka, TestInfo info) throws Exception {
        String topic = WatchFanoutSerdes.eventsTopic(TopicPrefixes.unique(info));
        try (EventsTopicHead head = new EventsTopicHead(consumer(kafka), topic);
                KafkaProducer<byte[], byte[]> producer = transactional(kafka, topic)) {
            assertThat(head.read(READ)).as("no topic yet").isZero();

            try (Admin admin =
                    Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)))
                        .all()
                        .get();
            }
            assertThat(head.read(READ)).as("an empty topic").isZero();

            producer.initTransactions();
            producer.beginTransaction();
            send(producer, topic, 5);
            send(producer, topic, 7);
            producer.commitTransaction();
            // The commit markers are written after commitTransaction() returns: the end moves then.
            await().until(() -> head.read(READ) == 7);

            producer.beginTransaction();
            send(producer, topic, 100);
            producer.flush();
            producer.abortTransaction();
            // After the abort marker: an open transaction's records do not count either.
            producer.beginTransaction();
            send(producer, topic, 200);
            producer.flush();
            assertThat(head.read(READ))
                    .as("aborted and open transactions are not read")
                    .isEqualTo(7);
            producer.commitTransaction();
            await().until(() -> head.read(READ) == 200);

            producer.beginTransaction();
            for (int r = 201; r <= 200 + 3 * EventsTopicHead.TAIL_RECORDS; r++) {
                send(producer, topic, r);
            }
            producer.commitTransaction();
            // More records than the tail read: only the last are read, the newest among them.
            await().until(() -> head.read(READ) == 200 + 3 * EventsTopicHead.TAIL_RECORDS);
        }
    }

    @Test
    void theLagInRevisionsIsTheTopicsNewestMinusTheProcessedAndNaNBeforeTheTopicWasRead() {
        KubeTopicsMetrics metrics = new KubeTopicsMetrics();
        assertThat(metrics.lagRevisions()).isNaN();
        assertThat(metrics.prometheusText(0)).contains("watchfanout_kube_lag_revisions NaN\n");

        metrics.newestInTopic(20);
        assertThat(metrics.lagRevisions()).isEqualTo(20.0);
        metrics.processed(12, 0);
        assertThat(metrics.prometheusText(0))
                .contains("watchfanout_kube_newest_revision 20\n")
                .contains("watchfanout_kube_lag_revisions 8\n");

        // Processed past the last read of the topic's end: no negative lag.
        metrics.processed(25, 0);
        assertThat(metrics.lagRevisions()).isZero();
        // The newest revision only grows (a read that found none reports 0).
        metrics.newestInTopic(0);
        assertThat(metrics.newestRevision()).isEqualTo(20);
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, long revision) {
        EventsRecord progress = EventsRecord.newBuilder()
                .setProgress(Progress.newBuilder().setRevision(revision).setPrevRevision(revision - 1))
                .build();
        producer.send(new ProducerRecord<>(topic, progress.toByteArray()));
    }

    private static KafkaConsumer<byte[], byte[]> consumer(KafkaBroker kafka) {
        return new KafkaConsumer<>(
                Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        kafka.bootstrapServers(),
                        ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                        "read_committed",
                        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                        false,
                        ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG,
                        false),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
    }

    private static KafkaProducer<byte[], byte[]> transactional(KafkaBroker kafka, String topic) {
        return new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        kafka.bootstrapServers(),
                        ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                        topic + ".test-ingester"),
                new ByteArraySerializer(),
                new ByteArraySerializer());
    }
}
