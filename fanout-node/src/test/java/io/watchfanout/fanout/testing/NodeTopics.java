package io.watchfanout.fanout.testing;

import io.watchfanout.schema.StateRecordSerializer;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The topics a node reads, made by a test that writes their records itself: {@code <prefix>.events}
 * (one partition) and {@code <prefix>.state} (compacted), and a transactional producer for them.
 */
public final class NodeTopics {
    private NodeTopics() {}

    /** Creates both topics of {@code prefix} on the broker at {@code bootstrap}. */
    public static void create(String bootstrap, String prefix) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(
                            new NewTopic(WatchFanoutSerdes.eventsTopic(prefix), 1, (short) 1),
                            new NewTopic(WatchFanoutSerdes.stateTopic(prefix), 1, (short) 1)
                                    .configs(Map.of("cleanup.policy", "compact"))))
                    .all()
                    .get();
        }
    }

    /** A transactional byte-array producer, transactions initialised; the caller closes it. */
    public static KafkaProducer<byte[], byte[]> producer(String bootstrap, String prefix) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", prefix + "-test");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
        producer.initTransactions();
        return producer;
    }

    /** The state topic's checkpoint record: the state is at {@code revision}, events follow from {@code eventsOffset}. */
    public static ProducerRecord<byte[], byte[]> checkpoint(String stateTopic, long revision, long eventsOffset) {
        return new ProducerRecord<>(
                stateTopic,
                new byte[0],
                new StateRecordSerializer()
                        .serialize(
                                stateTopic,
                                StateRecord.newBuilder()
                                        .setCheckpoint(StateCheckpoint.newBuilder()
                                                .setRevision(revision)
                                                .setEventsOffset(eventsOffset))
                                        .build()));
    }
}
