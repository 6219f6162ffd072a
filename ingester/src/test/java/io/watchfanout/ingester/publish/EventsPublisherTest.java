package io.watchfanout.ingester.publish;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.ingester.IngesterConfig;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.topics.TopicManager;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TestPrefix;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How the publisher's transactions reach the broker: the records of one {@link
 * EventsPublisher#publish} call leave in one produce request, not in pieces the producer's
 * sender thread picks up while they are still being appended (each of which the broker
 * validates, appends and acknowledges on its own).
 */
@ExtendWith(KafkaExtension.class)
class EventsPublisherTest {
    private static final int TRANSACTIONS = 20;
    private static final int RECORDS = 200;

    private final KafkaBroker kafka;

    EventsPublisherTest(KafkaBroker kafka) {
        this.kafka = kafka;
    }

    @Test
    void aTransactionLeavesInOneProduceRequest(TestInfo info) throws Exception {
        TestPrefix prefix = TestPrefix.unique(info);
        // The topics and the producer as the ingester makes them (no etcd is needed here).
        IngesterConfig config =
                Ingesters.config("http://127.0.0.1:1", kafka.bootstrapServers(), prefix.topicPrefix(), "");
        new TopicManager(kafka.bootstrapServers(), KafkaClientSettings.NONE).ensure(config.topicSettings());
        // One request per transaction. With linger.ms=0 the same transactions took 32 and 76
        // requests on an idle box (how many depends on the threads' timing, so not asserted).
        // linger.ms is a time: a transaction whose sends outlast it on a box loaded by other work
        // may leave in one more request per linger.ms it took, and only then.
        long[] lingersOutlasted = {0};
        assertThat(produceRequests(config, lingersOutlasted))
                .isBetween((double) TRANSACTIONS, (double) TRANSACTIONS + lingersOutlasted[0]);
    }

    /**
     * Publishes the transactions and returns the producer's count of produce requests; adds to
     * {@code lingersOutlasted[0]} how many times linger.ms went by during the publish calls.
     */
    private double produceRequests(IngesterConfig config, long[] lingersOutlasted) throws InterruptedException {
        try (EventsPublisher publisher = new EventsPublisher(
                config.kafka().bootstrap(),
                KafkaClientSettings.NONE,
                WatchFanoutSerdes.eventsTopic(config.kafka().topicPrefix()),
                config.commit().transactionalId(),
                config.kafka().maxRecordBytes(),
                config.commit().transactionTimeout(),
                Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"))) {
            long revision = 1;
            for (int t = 0; t < TRANSACTIONS; t++) {
                List<KeyedRecord> records = new ArrayList<>();
                for (int i = 0; i < RECORDS; i++, revision++) {
                    records.add(record(revision));
                }
                long start = System.nanoTime();
                publisher.publish(records);
                lingersOutlasted[0] += (System.nanoTime() - start) / 1_000_000 / EventsPublisher.LINGER_MS;
            }
            // records-per-request-avg is a windowed average; the request count comes from the
            // records sent and that average, which holds while every request carries whole batches.
            return metric(publisher, "record-send-total") / metric(publisher, "records-per-request-avg");
        }
    }

    private static double metric(EventsPublisher publisher, String name) {
        return publisher.producerMetrics().entrySet().stream()
                .filter(e -> e.getKey().group().equals("producer-metrics")
                        && e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                .findFirst()
                .orElseThrow();
    }

    private static KeyedRecord record(long revision) {
        byte[] key = ("/registry/pods/p-" + revision).getBytes(StandardCharsets.UTF_8);
        KeyValue kv = KeyValue.newBuilder()
                .setKey(ByteString.copyFrom(key))
                .setValue(ByteString.copyFrom(new byte[1024]))
                .setCreateRevision(revision)
                .setModRevision(revision)
                .setVersion(1)
                .build();
        EventsRecord value = EventsRecord.newBuilder()
                .setEvent(Event.newBuilder()
                        .setType(Event.Type.PUT)
                        .setKv(kv)
                        .setRevision(revision)
                        .setIndex(0)
                        .setCount(1))
                .build();
        return new KeyedRecord(key, value, revision);
    }
}
