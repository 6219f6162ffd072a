package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.support.StateTopicDump;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TestPrefix;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Invariants 1–4 (docs/ARCHITECTURE.md) against real etcd and Kafka with an ingester in this JVM: the events topic
 * equals a direct etcd watch, revision by revision, and the state topic equals etcd.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class IngesterExactnessTest {
    private final EtcdServer etcdServer;
    private final KafkaBroker kafka;
    private Client etcd;
    private String topicPrefix;
    private String keyPrefix;

    IngesterExactnessTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    @BeforeEach
    void setUp(Client client, TestPrefix prefix) {
        etcd = client;
        topicPrefix = prefix.topicPrefix();
        keyPrefix = prefix.keyPrefix();
    }

    private long lastRevision(String topic) {
        List<ConsumerRecord<byte[], EventsRecord>> records = EventsTopicDump.read(kafka.bootstrapServers(), topic);
        return records.isEmpty()
                ? -1
                : EventsRecords.revision(records.get(records.size() - 1).value());
    }

    @Test
    void eventsTopicEqualsADirectWatchAndStateTopicEqualsEtcd() throws Exception {
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 42, 60);
        workload.run(100); // before the ingester starts: becomes the initial resync
        long beforeLease = EtcdWorkload.currentRevision(etcd);
        long lease = workload.leaseWithKeys(4, 2);
        String events = WatchFanoutSerdes.eventsTopic(topicPrefix);
        try (Ingester ingester = Ingesters.inProcess(
                Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix))) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> ingester.notReadyReason().isEmpty());
            long last = workload.run(1000);
            // Writes outside the range move revisions on without events of the range.
            new EtcdWorkload(etcd, "/elsewhere/" + topicPrefix + "/", 7, 10).run(20);
            long leaseGone = waitForLeaseExpiry(lease, beforeLease);
            long until = Math.max(last, leaseGone);
            await().atMost(Duration.ofSeconds(60)).until(() -> lastRevision(events) >= until);

            List<ConsumerRecord<byte[], EventsRecord>> records = EventsTopicDump.read(kafka.bootstrapServers(), events);
            int compared = Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), until);
            assertThat(compared).isGreaterThanOrEqualTo(1000);
            assertThat(records)
                    .anySatisfy(r -> assertThat(r.value().getEvent().getCount()).isGreaterThan(1));
            // The lease expiry deleted its four keys in one revision.
            assertThat(Exactness.watchEvents(records))
                    .filteredOn(e ->
                            e.getType() == Event.Type.DELETE && e.getPrevKv().getLease() == lease)
                    .hasSize(4)
                    .extracting(Event::getRevision)
                    .containsOnly(leaseGone);

            await().atMost(Duration.ofSeconds(60))
                    .until(() -> readState(topicPrefix).checkpoint().getRevision() >= lastRevision(events));
            assertStateEqualsEtcd(readState(topicPrefix));
        }
    }

    private long waitForLeaseExpiry(long lease, long since) throws Exception {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> etcd.getLeaseClient()
                                        .timeToLive(lease, io.etcd.jetcd.options.LeaseOption.DEFAULT)
                                        .get(5, TimeUnit.SECONDS)
                                        .getTTL()
                                <= 0
                        && etcd.getKVClient()
                                .get(EtcdWorkload.bytes(keyPrefix + "lease-" + lease + "-0"))
                                .get(5, TimeUnit.SECONDS)
                                .getKvs()
                                .isEmpty());
        List<Event> deletes = io.watchfanout.ingester.support.EtcdHistory.events(
                etcd,
                ByteString.copyFromUtf8(keyPrefix + "lease-" + lease + "-"),
                since + 1,
                EtcdWorkload.currentRevision(etcd));
        return deletes.get(deletes.size() - 1).getRevision();
    }

    private StateTopicDump.State readState(String prefix) {
        return StateTopicDump.read(kafka.bootstrapServers(), WatchFanoutSerdes.stateTopic(prefix));
    }

    private void assertStateEqualsEtcd(StateTopicDump.State state) throws Exception {
        Exactness.assertStateEqualsEtcd(state, etcd, keyPrefix);
    }
}
