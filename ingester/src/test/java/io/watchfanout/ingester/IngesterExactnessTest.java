package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.support.StateTopicDump;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
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
 * Invariants 1–4 (docs/ARCHITECTURE.md) against real etcd and Kafka with an ingester in this JVM: the events topic
 * equals a direct etcd watch, revision by revision, and the state topic equals etcd.
 */
class IngesterExactnessTest extends EtcdKafkaTest {

    IngesterExactnessTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
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

    /**
     * The production layout: the publisher without the materializer, and the materializer as a
     * process of its own (started first: it creates the topics), killed with SIGKILL in the middle
     * of the writes and started again. Kafka Streams' exactly-once transactions make the state
     * topic equal etcd at the end all the same.
     */
    @Test
    void aMaterializerProcessOfItsOwnSurvivesSigkillAndKeepsTheStateTopicEqualToEtcd() throws Exception {
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 7, 40);
        workload.run(50);
        String events = WatchFanoutSerdes.eventsTopic(topicPrefix);
        IngesterConfig publisherOnly = withoutMaterializer(
                Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix));
        try (io.watchfanout.testkit.JavaProcess first = materializerProcess("materializer-1")) {
            first.awaitLog("materializing", Duration.ofSeconds(60));
            try (Ingester ingester = Ingesters.inProcess(publisherOnly)) {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> ingester.notReadyReason().isEmpty());
                workload.run(300);
                first.kill();
                workload.run(300);
                try (io.watchfanout.testkit.JavaProcess second = materializerProcess("materializer-2")) {
                    long last = workload.run(300);
                    await().atMost(Duration.ofSeconds(60)).until(() -> lastRevision(events) >= last);
                    await().atMost(Duration.ofSeconds(90))
                            .until(() -> readState(topicPrefix).checkpoint().getRevision() >= last);
                    assertStateEqualsEtcd(readState(topicPrefix));
                    String line = second.awaitLog("operations endpoints on", Duration.ofSeconds(10));
                    String ops = "http://127.0.0.1:" + line.replaceAll(".*127\\.0\\.0\\.1:(\\d+).*", "$1");
                    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> get(http, ops + "/readyz").equals("200 ok\n"));
                    assertThat(get(http, ops + "/metrics"))
                            .contains("watchfanout_materializer_ready 1.0")
                            .contains("watchfanout_materializer_lag_records");
                }
            }
        }
    }

    private static String get(java.net.http.HttpClient http, String url) throws Exception {
        java.net.http.HttpResponse<String> r = http.send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        return r.statusCode() + " " + r.body();
    }

    private static IngesterConfig withoutMaterializer(IngesterConfig c) {
        IngesterConfig.Roles r = c.roles();
        return new IngesterConfig(
                c.etcd(),
                c.kafka(),
                c.topics(),
                c.history(),
                c.commit(),
                new IngesterConfig.Roles(true, false, r.leaderElection(), r.electionName(), r.electionLeaseTtl()),
                c.recovery(),
                c.operations(),
                c.digests());
    }

    /** {@code IngesterMain --no-publisher} as a child JVM: no etcd flags at all. */
    private io.watchfanout.testkit.JavaProcess materializerProcess(String name) {
        return io.watchfanout.testkit.JavaProcess.builder(IngesterMain.class.getName())
                .name(name)
                .maxHeap("256m")
                .args(
                        "--no-publisher",
                        "--kafka-bootstrap",
                        kafka.bootstrapServers(),
                        "--topic-prefix",
                        topicPrefix,
                        "--http-host",
                        "127.0.0.1",
                        "--http-port",
                        "0",
                        "--retry-backoff-max",
                        "1s")
                .jvmArg("-XX:TieredStopAtLevel=1")
                .jvmArg("-XX:+UseSerialGC")
                .systemProperty("logback.configurationFile", "logback.xml")
                .start();
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
