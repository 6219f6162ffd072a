package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.testkit.EtcdKafkaTest;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What lands in the events topic for large revisions, quiet ranges and compactions, and how
 * Kafka users read it: a plain consumer with the schema's deserializer and a Kafka Streams
 * topology with the schema's Serde.
 */
@SuppressWarnings("try") // an ingester runs for the length of a try block
class IngesterRecordsTest extends EtcdKafkaTest {
    private String eventsTopic;

    IngesterRecordsTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    @BeforeEach
    void setUp() {
        eventsTopic = WatchFanoutSerdes.eventsTopic(topicPrefix);
    }

    private Ingester start() {
        return start(etcdServer.clientUrl());
    }

    private Ingester start(String etcdUrl) {
        Ingester ingester =
                Ingesters.inProcess(Ingesters.config(etcdUrl, kafka.bootstrapServers(), topicPrefix, keyPrefix));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> ingester.notReadyReason().isEmpty());
        return ingester;
    }

    private List<ConsumerRecord<byte[], EventsRecord>> recordsUntil(long revision) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            List<ConsumerRecord<byte[], EventsRecord>> r = EventsTopicDump.read(kafka.bootstrapServers(), eventsTopic);
            return !r.isEmpty() && EventsRecords.revision(r.get(r.size() - 1).value()) >= revision;
        });
        return EventsTopicDump.read(kafka.bootstrapServers(), eventsTopic);
    }

    private static ByteSequence randomBytes(Random random, int size) {
        byte[] b = new byte[size];
        random.nextBytes(b);
        return ByteSequence.from(b);
    }

    @Test
    void aFourMebibyteTransactionAndALargeValuePassIntact() throws Exception {
        Random random = new Random(3);
        try (Ingester ingester = start()) {
            List<Op> ops = new ArrayList<>();
            for (int i = 0; i < 80; i++) {
                ops.add(Op.put(
                        EtcdWorkload.bytes(keyPrefix + "big-" + i), randomBytes(random, 60_000), PutOption.DEFAULT));
            }
            long txnRevision = etcd.getKVClient()
                    .txn()
                    .Then(ops.toArray(Op[]::new))
                    .commit()
                    .get(30, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
            ByteSequence large = randomBytes(random, 1_400_000);
            long largeRevision = etcd.getKVClient()
                    .put(EtcdWorkload.bytes(keyPrefix + "large"), large)
                    .get(30, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
            // The update carries the old 1.4 MB value as prev_kv as well.
            long updateRevision = etcd.getKVClient()
                    .put(EtcdWorkload.bytes(keyPrefix + "large"), randomBytes(random, 1_400_000))
                    .get(30, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();

            List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(updateRevision);
            List<Event> txn = Exactness.watchEvents(records).stream()
                    .filter(e -> e.getRevision() == txnRevision)
                    .toList();
            assertThat(txn).hasSize(80);
            assertThat(txn.stream().mapToLong(e -> e.getKv().getValue().size()).sum())
                    .isEqualTo(80 * 60_000L);
            Event largeEvent = Exactness.watchEvents(records).stream()
                    .filter(e -> e.getRevision() == largeRevision)
                    .findFirst()
                    .orElseThrow();
            assertThat(largeEvent.getKv().getValue()).isEqualTo(ByteString.copyFrom(large.getBytes()));
            Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), updateRevision);
        }
    }

    @Test
    void aQuietRangeStillGetsProgressThatAdvances() throws Exception {
        try (Ingester ingester = start()) {
            long first = 0;
            for (int round = 0; round < 3; round++) {
                long revision = new EtcdWorkload(etcd, "/elsewhere/" + topicPrefix + "/", round, 5).run(5);
                List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(revision);
                EventsRecord last = records.get(records.size() - 1).value();
                assertThat(last.hasProgress()).isTrue();
                assertThat(last.getProgress().getRevision())
                        .isGreaterThanOrEqualTo(revision)
                        .isGreaterThan(first);
                first = last.getProgress().getRevision();
            }
            assertThat(Exactness.watchEvents(EventsTopicDump.read(kafka.bootstrapServers(), eventsTopic)))
                    .isEmpty();
        }
    }

    @Test
    void aCompactedResumePointLeadsToAResyncThatDropsDeletedKeys() throws Exception {
        // A private etcd: compaction would cut the history other test classes read back.
        try (EtcdServer privateEtcd = new EtcdServer().start();
                Client privateClient =
                        Client.builder().endpoints(privateEtcd.clientUrl()).build()) {
            etcd = privateClient;
            compactionLeadsToResync(privateEtcd.clientUrl());
        }
    }

    private void compactionLeadsToResync(String etcdUrl) throws Exception {
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 11, 40);
        try (Ingester ingester = start(etcdUrl)) {
            recordsUntil(workload.run(200));
        }
        // While no ingester runs: more writes, deletes of every key, then etcd compacts them away.
        workload.run(100);
        etcd.getKVClient().delete(EtcdWorkload.bytes(keyPrefix + "k1")).get(10, TimeUnit.SECONDS);
        workload.run(50);
        long now = EtcdWorkload.currentRevision(etcd);
        etcd.getKVClient().compact(now).get(10, TimeUnit.SECONDS);
        long after = workload.run(20);
        try (Ingester ingester = start(etcdUrl)) {
            List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(after);
            RevisionChain chain = new RevisionChain();
            records.forEach(r -> chain.accept(r.value()));
            assertThat(records)
                    .filteredOn(r -> r.value().hasResync())
                    .extracting(r -> r.value().getResync().getReason())
                    .containsExactly(
                            io.watchfanout.schema.v1.Resync.Reason.INITIAL,
                            io.watchfanout.schema.v1.Resync.Reason.COMPACTED);
            // After the resync, the published state equals etcd (deleted keys gone, changed ones updated).
            Map<ByteString, io.watchfanout.schema.v1.KeyValue> published = new java.util.HashMap<>();
            for (ConsumerRecord<byte[], EventsRecord> r : records) {
                if (r.value().hasEvent()) {
                    Event e = r.value().getEvent();
                    if (e.getType() == Event.Type.PUT) {
                        published.put(e.getKv().getKey(), e.getKv());
                    } else {
                        published.remove(e.getKv().getKey());
                    }
                }
            }
            Map<ByteString, io.watchfanout.schema.v1.KeyValue> expected = new java.util.HashMap<>();
            etcd.getKVClient()
                    .get(
                            EtcdWorkload.bytes(keyPrefix),
                            io.etcd.jetcd.options.GetOption.builder()
                                    .isPrefix(true)
                                    .withRevision(chain.lastRevision())
                                    .build())
                    .get(10, TimeUnit.SECONDS)
                    .getKvs()
                    .forEach(kv -> expected.put(
                            ByteString.copyFrom(kv.getKey().getBytes()),
                            io.watchfanout.ingester.etcd.EtcdEvents.toKeyValue(kv)));
            assertThat(published).containsExactlyInAnyOrderEntriesOf(expected);
        }
    }

    @Test
    void plainConsumersAndKafkaStreamsReadTheTopicThroughTheSchema() throws Exception {
        long until;
        try (Ingester ingester = start()) {
            until = new EtcdWorkload(etcd, keyPrefix, 5, 20).run(200);
            recordsUntil(until);
        }
        // A plain consumer configured by class names, as a user's application would be.
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, EventsRecordDeserializer.class.getName());
        long events = 0;
        try (KafkaConsumer<byte[], EventsRecord> consumer = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(eventsTopic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            RevisionChain chain = new RevisionChain();
            while (consumer.position(tp) < end) {
                for (ConsumerRecord<byte[], EventsRecord> r : consumer.poll(Duration.ofMillis(200))) {
                    chain.accept(r.value());
                    if (r.value().hasEvent() && !r.value().getEvent().getResync()) {
                        events++;
                    }
                }
            }
            assertThat(chain.lastRevision()).isGreaterThanOrEqualTo(until);
        }
        assertThat(events).isPositive();

        // A Kafka Streams topology with the schema's Serde counts the same events.
        StreamsBuilder builder = new StreamsBuilder();
        AtomicLong counted = new AtomicLong();
        Map<String, Long> byType = new ConcurrentHashMap<>();
        builder.stream(eventsTopic, Consumed.with(Serdes.ByteArray(), WatchFanoutSerdes.eventsRecord()))
                .filter((key, record) -> record.hasEvent() && !record.getEvent().getResync())
                .foreach((key, record) -> {
                    counted.incrementAndGet();
                    byType.merge(record.getEvent().getType().name(), 1L, Long::sum);
                });
        Properties streamsProps = new Properties();
        streamsProps.put(StreamsConfig.APPLICATION_ID_CONFIG, topicPrefix + "-reader");
        streamsProps.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        streamsProps.put(
                StreamsConfig.STATE_DIR_CONFIG,
                Files.createTempDirectory("streams").toString());
        streamsProps.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        streamsProps.put(StreamsConfig.consumerPrefix(ConsumerConfig.ISOLATION_LEVEL_CONFIG), "read_committed");
        try (KafkaStreams streams = new KafkaStreams(builder.build(), streamsProps)) {
            streams.start();
            long expected = events;
            await().atMost(Duration.ofSeconds(60)).until(() -> counted.get() == expected);
        }
        assertThat(byType).containsKeys("PUT", "DELETE");
    }
}
