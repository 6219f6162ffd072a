package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.Resync;
import io.watchfanout.testkit.EtcdKafkaTest;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * Where an empty events topic's history starts: at the oldest revision etcd holds (its compaction
 * revision, or the first), bounded by {@code --initial-history-revisions}, so that writes made
 * before the ingester's first snapshot are in the topic as the events they were, not folded into
 * its initial state.
 */
@SuppressWarnings("try") // an ingester runs for the length of a try block
class IngesterHistoryStartTest extends EtcdKafkaTest {
    IngesterHistoryStartTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    private Ingester start(IngesterConfig config) {
        Ingester ingester = Ingesters.inProcess(config);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> ingester.notReadyReason().isEmpty());
        return ingester;
    }

    private List<ConsumerRecord<byte[], EventsRecord>> recordsUntil(long revision) {
        String topic = WatchFanoutSerdes.eventsTopic(topicPrefix);
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            List<ConsumerRecord<byte[], EventsRecord>> r = EventsTopicDump.read(kafka.bootstrapServers(), topic);
            return !r.isEmpty() && EventsRecords.revision(r.get(r.size() - 1).value()) >= revision;
        });
        return EventsTopicDump.read(kafka.bootstrapServers(), topic);
    }

    private static Resync initialResync(List<ConsumerRecord<byte[], EventsRecord>> records) {
        EventsRecord first = records.get(0).value();
        assertThat(first.hasResync())
                .as("the topic's first record is the initial resync")
                .isTrue();
        assertThat(first.getResync().getReason()).isEqualTo(Resync.Reason.INITIAL);
        return first.getResync();
    }

    @Test
    void writesBeforeTheFirstSnapshotAreInTheTopicAsTheirOwnEvents() throws Exception {
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 47, 8);
        long firstWrite = etcd.getKVClient()
                .put(EtcdWorkload.bytes(keyPrefix + "first"), EtcdWorkload.bytes("1"))
                .get(10, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
        long lastWrite = workload.run(40); // puts and deletes, all before the ingester starts
        try (Ingester ingester =
                start(Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix))) {
            long after = workload.run(10);
            List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(after);
            Resync initial = initialResync(records);
            assertThat(initial.getRevision())
                    .as("the history starts before the first write under the prefix")
                    .isLessThan(firstWrite);
            assertThat(initial.getEntryCount()).isZero();
            // Every event from the first write on is in the topic at its own revision, equal to etcd's.
            int compared = Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), after);
            assertThat(compared).isGreaterThan(20);
            assertThat(Exactness.watchEvents(records).get(0).getRevision()).isEqualTo(firstWrite);
            assertThat(lastWrite).isLessThan(after);
        }
    }

    @Test
    void theHistoryStartsNoFurtherBackThanTheBound() throws Exception {
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 48, 8);
        workload.run(30);
        long now = EtcdWorkload.currentRevision(etcd);
        IngesterConfig config =
                Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix, 5);
        try (Ingester ingester = start(config)) {
            long after = workload.run(5);
            List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(after);
            Resync initial = initialResync(records);
            // Other tests of this JVM may write to the shared etcd meanwhile: at least 5 back from
            // the revision read before the start, and no more than 5 back from etcd's at the start.
            assertThat(initial.getRevision()).isGreaterThanOrEqualTo(now - 5);
            assertThat(initial.getEntryCount())
                    .as("the state as of that revision")
                    .isPositive();
            Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), after);
        }
    }

    @Test
    void aCompactedEtcdIsPublishedFromItsCompactionRevision() throws Exception {
        // A private etcd: compaction would cut the history other test classes read back.
        try (EtcdServer privateEtcd = new EtcdServer().start();
                Client client =
                        Client.builder().endpoints(privateEtcd.clientUrl()).build()) {
            EtcdWorkload workload = new EtcdWorkload(client, keyPrefix, 49, 8);
            long compacted = workload.run(30);
            workload.run(20);
            client.getKVClient().compact(compacted).get(10, TimeUnit.SECONDS);
            long beforeStart = workload.run(10);
            try (Ingester ingester = start(
                    Ingesters.config(privateEtcd.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix))) {
                long after = workload.run(10);
                List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(after);
                Resync initial = initialResync(records);
                assertThat(initial.getRevision()).isEqualTo(compacted);
                assertThat(initial.getEntryCount()).isPositive();
                assertThat(Exactness.assertTopicEqualsEtcd(records, client, ByteString.copyFromUtf8(keyPrefix), after))
                        .isGreaterThan(10);
                assertThat(beforeStart).isLessThan(after);
            }
        }
    }

    @Test
    void anEmptyEtcdStartsAtItsFirstRevision() throws Exception {
        try (EtcdServer privateEtcd = new EtcdServer().start();
                Client client =
                        Client.builder().endpoints(privateEtcd.clientUrl()).build()) {
            try (Ingester ingester = start(
                    Ingesters.config(privateEtcd.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix))) {
                long after = new EtcdWorkload(client, keyPrefix, 50, 4).run(5);
                List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(after);
                assertThat(initialResync(records).getRevision()).isEqualTo(1);
                assertThat(Exactness.assertTopicEqualsEtcd(records, client, ByteString.copyFromUtf8(keyPrefix), after))
                        .isPositive();
            }
        }
    }
}
