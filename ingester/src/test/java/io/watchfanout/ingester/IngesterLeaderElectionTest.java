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
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TestPrefix;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two ingester replicas with leader election through etcd: exactly one publishes; when it
 * dies the other takes over within the election lease time, and the topic stays exact.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class IngesterLeaderElectionTest {
    private static final String TTL = "3s";
    private final EtcdServer etcdServer;
    private final KafkaBroker kafka;

    IngesterLeaderElectionTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    private static String log(JavaProcess p) throws Exception {
        return Files.readString(p.logFile());
    }

    /** Waits until the events topic holds {@code revision}. */
    private void awaitPublished(String events, long revision) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            List<ConsumerRecord<byte[], EventsRecord>> r = EventsTopicDump.read(kafka.bootstrapServers(), events);
            return !r.isEmpty() && EventsRecords.revision(r.get(r.size() - 1).value()) >= revision;
        });
    }

    @Test
    void oneReplicaPublishesAndTheOtherTakesOverWhenItDies(Client etcd, TestPrefix names) throws Exception {
        String prefix = names.topicPrefix();
        String keyPrefix = names.keyPrefix();
        String events = WatchFanoutSerdes.eventsTopic(prefix);
        try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 5);
                JavaProcess first = Ingesters.process(
                        "replica-1",
                        etcdServer.clientUrl(),
                        kafka.bootstrapServers(),
                        prefix,
                        keyPrefix,
                        "--leader-election",
                        "--election-lease-ttl",
                        TTL);
                JavaProcess second = Ingesters.process(
                        "replica-2",
                        etcdServer.clientUrl(),
                        kafka.bootstrapServers(),
                        prefix,
                        keyPrefix,
                        "--leader-election",
                        "--election-lease-ttl",
                        TTL)) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> log(first).contains("watching etcd from revision")
                            || log(second).contains("watching etcd from revision"));
            Thread.sleep(3000);
            JavaProcess leader = log(first).contains("became the leader") ? first : second;
            JavaProcess standby = leader == first ? second : first;
            assertThat(log(standby))
                    .contains("campaigning")
                    .doesNotContain("became the leader")
                    .doesNotContain("watching etcd");

            leader.kill();
            long killedAt = System.nanoTime();
            standby.awaitLog("watching etcd from revision", Duration.ofSeconds(30));
            long takeoverMillis = (System.nanoTime() - killedAt) / 1_000_000;
            // The dead leader's lease expires after its TTL; the standby is elected right then.
            assertThat(log(standby)).contains("became the leader");
            System.out.println("takeover after " + takeoverMillis + " ms (lease TTL " + TTL + ")");
            // More writes with the new leader: it publishes what was written after it took over.
            awaitPublished(events, EtcdWorkload.currentRevision(etcd));
            writer.stop();

            long until = EtcdWorkload.currentRevision(etcd);
            awaitPublished(events, until);
            Exactness.assertTopicEqualsEtcd(
                    EventsTopicDump.read(kafka.bootstrapServers(), events),
                    etcd,
                    ByteString.copyFromUtf8(keyPrefix),
                    until);
        }
    }

    @Test
    void aReplicaDeposedWhileWaitingForKafkaNeverFencesTheNewLeader(Client etcd, TestPrefix names) throws Exception {
        String prefix = names.topicPrefix();
        String keyPrefix = names.keyPrefix();
        String election = "/watchfanout/elections/" + prefix + "/ingester";
        String[] flags = {"--leader-election", "--election-lease-ttl", TTL};
        kafka.stop();
        boolean kafkaStopped = true;
        try (JavaProcess first = Ingesters.process(
                "replica-1", etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, keyPrefix, flags)) {
            first.awaitLog("became the leader", Duration.ofSeconds(60));
            // Depose it while it waits for Kafka, as an expired lease would: its election key goes.
            long lease = etcd.getKVClient()
                    .get(
                            EtcdWorkload.bytes(election),
                            io.etcd.jetcd.options.GetOption.builder()
                                    .isPrefix(true)
                                    .build())
                    .get()
                    .getKvs()
                    .get(0)
                    .getLease();
            etcd.getLeaseClient().revoke(lease).get();
            try (JavaProcess second = Ingesters.process(
                    "replica-2", etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, keyPrefix, flags)) {
                second.awaitLog("became the leader", Duration.ofSeconds(60));
                // Kafka comes back while both wait for it: only the leader may initialise a producer.
                kafka.restart();
                kafkaStopped = false;
                second.awaitLog("watching etcd from revision", Duration.ofSeconds(90));
                long until = new EtcdWorkload(etcd, keyPrefix, 3, 10).run(30);
                Thread.sleep(5000);
                // A deposed replica that initialised a producer would have fenced the leader: it
                // gives up its leadership ("giving up leadership") and fails over a second time.
                assertThat(log(second)).doesNotContain("giving up leadership");
                assertThat(log(first))
                        .doesNotContain("giving up leadership")
                        .doesNotContain("watching etcd from revision");
                String events = WatchFanoutSerdes.eventsTopic(prefix);
                awaitPublished(events, until);
                Exactness.assertTopicEqualsEtcd(
                        EventsTopicDump.read(kafka.bootstrapServers(), events),
                        etcd,
                        ByteString.copyFromUtf8(keyPrefix),
                        until);
            }
        } finally {
            if (kafkaStopped) {
                kafka.restart();
            }
        }
    }
}
