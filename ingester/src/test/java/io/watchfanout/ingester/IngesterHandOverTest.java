package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.support.StateTopicDump;
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
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A planned hand-over, as in a rolling update: the leading ingester gets SIGTERM while a standby
 * campaigns and a writer keeps writing. The leader stops at a revision boundary, resigns and leaves
 * the state materializer's consumer group; the standby is elected on the resignation, not on the
 * lease's expiry; nothing is lost or repeated in either topic.
 *
 * <p>That the standby was elected before the old leader's lease could have expired is shown by
 * etcd's own lease clock, not by the test's: a witness lease with the same TTL is granted before
 * the leader's last keep-alive, so it expires no later than the leader's lease would have; it is
 * still alive once the standby publishes.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class IngesterHandOverTest {
    private static final long TTL_SECONDS = 45;
    private static final Pattern RESUMED = Pattern.compile("\\[revision (\\d+)] resuming after the last revision");

    private final EtcdServer etcdServer;
    private final KafkaBroker kafka;

    IngesterHandOverTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    @Test
    void aTerminatedLeaderHandsOverOnItsResignationAndNothingIsLostOrRepeated(Client etcd, TestPrefix names)
            throws Exception {
        String prefix = names.topicPrefix();
        String keyPrefix = names.keyPrefix();
        String election = "/watchfanout/elections/" + prefix + "/ingester";
        String events = WatchFanoutSerdes.eventsTopic(prefix);
        try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 5);
                JavaProcess first = replica("replica-1", prefix, keyPrefix)) {
            first.awaitLog("watching etcd from revision", Duration.ofSeconds(60));
            JavaProcess second = replica("replica-2", prefix, keyPrefix);
            JavaProcess third = null;
            try {
                second.awaitLog("campaigning", Duration.ofSeconds(60));
                long firstHandOver = handOver(etcd, election, prefix, first, second);

                // A rolling update: the stopped replica comes back as a standby, then the new
                // leader is stopped in its turn, its materializer only just in the group.
                third = replica("replica-1-again", prefix, keyPrefix);
                third.awaitLog("campaigning", Duration.ofSeconds(60));
                long secondHandOver = handOver(etcd, election, prefix, second, third);
                assertThat(secondHandOver).isGreaterThan(firstHandOver);

                awaitPublished(events, EtcdWorkload.currentRevision(etcd) + 1);
                writer.stop();
                long until = EtcdWorkload.currentRevision(etcd);
                awaitPublished(events, until);
                List<ConsumerRecord<byte[], EventsRecord>> records =
                        EventsTopicDump.read(kafka.bootstrapServers(), events);
                int compared =
                        Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), until);
                // Each leader published events of its own: the writer wrote across both hand-overs.
                assertThat(records.stream()
                                .filter(r -> r.value().hasEvent())
                                .map(r -> EventsRecords.revision(r.value())))
                        .anyMatch(revision -> revision <= firstHandOver)
                        .anyMatch(revision -> revision > firstHandOver && revision <= secondHandOver)
                        .anyMatch(revision -> revision > secondHandOver);
                assertThat(compared).isPositive();
                // The materializer moved with the leadership and is complete too.
                String state = WatchFanoutSerdes.stateTopic(prefix);
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> StateTopicDump.read(kafka.bootstrapServers(), state)
                                        .checkpoint()
                                        .getRevision()
                                >= until);
                Exactness.assertStateEqualsEtcd(StateTopicDump.read(kafka.bootstrapServers(), state), etcd, keyPrefix);
                for (JavaProcess p : List.of(first, second, third)) {
                    assertThat(log(p))
                            .as(p.toString())
                            .doesNotContain("giving up leadership")
                            .doesNotContain("lost the leadership")
                            .doesNotContain("state materializer not stopped");
                }
            } finally {
                second.close();
                if (third != null) {
                    third.close();
                }
            }
        }
    }

    /**
     * After a crash the dead leader's materializer stays in its consumer group until its session
     * expires (45 s), and the new leader's materializer waits in its rebalance, holding no
     * partition. An ingester stopped meanwhile does not wait for that rebalance (its consumer's
     * close would, until the close timeout): it stops while the dead member is still there.
     */
    @Test
    void aLeaderStoppedWhileItsMaterializerWaitsForADeadMemberClosesIt(Client etcd, TestPrefix names) throws Exception {
        String prefix = names.topicPrefix();
        String keyPrefix = names.keyPrefix();
        String[] flags = {"--leader-election", "--election-lease-ttl", "3s"};
        try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 5);
                JavaProcess first = Ingesters.process(
                        "crashing", etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, keyPrefix, flags)) {
            first.awaitLog("watching etcd from revision", Duration.ofSeconds(60));
            Set<String> dead = awaitMaterializerMembers(prefix);
            try (JavaProcess second = Ingesters.process(
                    "successor", etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, keyPrefix, flags)) {
                second.awaitLog("campaigning", Duration.ofSeconds(60));
                first.kill();
                second.awaitLog("watching etcd from revision", Duration.ofSeconds(60));
                // The successor's materializer joined the group; the dead member is still in it.
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> materializerMembers(prefix).size() > dead.size());
                assertThat(materializerMembers(prefix)).containsAll(dead);

                second.stop(Duration.ofSeconds(30));
                writer.stop();

                assertThat(log(second))
                        .contains("resigned the leadership")
                        .contains("state materializer held no partition")
                        .contains("stopped in")
                        .doesNotContain("state materializer not stopped");
            }
        }
    }

    /**
     * Stops {@code leader} with SIGTERM and waits until {@code standby} publishes.
     *
     * @return the revision the standby resumed after
     */
    private long handOver(Client etcd, String election, String prefix, JavaProcess leader, JavaProcess standby)
            throws Exception {
        KeyValue leaderKey = electionKeys(etcd, election).get(0);
        assertThat(leaderKey.getValue().toString(java.nio.charset.StandardCharsets.UTF_8))
                .as("the leader's proposal")
                .endsWith("/" + leader.pid());
        long leaderLease = leaderKey.getLease();
        long witness = etcd.getLeaseClient()
                .grant(TTL_SECONDS)
                .get(5, TimeUnit.SECONDS)
                .getID();
        // Once the leader renewed its lease after the witness was granted, its lease would expire
        // after the witness does.
        await().atMost(Duration.ofSeconds(2 * TTL_SECONDS))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> ttl(etcd, leaderLease) > ttl(etcd, witness));
        // Only the leader runs the materializer: the group's members are its own.
        Set<String> leaderMembers = awaitMaterializerMembers(prefix);

        leader.stop(Duration.ofSeconds(30));

        assertThat(log(leader)).contains("resigned the leadership").contains("stopped in");
        assertThat(materializerMembers(prefix))
                .as("the stopped leader's materializer left its consumer group")
                .doesNotContainAnyElementsOf(leaderMembers);
        standby.awaitLog("watching etcd from revision", Duration.ofSeconds(60));
        assertThat(ttl(etcd, witness))
                .as("the witness lease, which expires before the old leader's would have, is alive: "
                        + "the standby was elected on the resignation")
                .isPositive();
        etcd.getLeaseClient().revoke(witness).get(5, TimeUnit.SECONDS);
        Matcher resumed = RESUMED.matcher(log(standby));
        assertThat(resumed.find())
                .as("the new leader resumed from the events topic")
                .isTrue();
        return Long.parseLong(resumed.group(1));
    }

    private JavaProcess replica(String name, String prefix, String keyPrefix) {
        return Ingesters.process(
                name,
                etcdServer.clientUrl(),
                kafka.bootstrapServers(),
                prefix,
                keyPrefix,
                "--leader-election",
                "--election-lease-ttl",
                TTL_SECONDS + "s");
    }

    /** The election's keys, oldest (the leader's) first. */
    private static List<KeyValue> electionKeys(Client etcd, String election) throws Exception {
        List<KeyValue> keys = etcd.getKVClient()
                .get(
                        EtcdWorkload.bytes(election),
                        GetOption.builder().isPrefix(true).build())
                .get(5, TimeUnit.SECONDS)
                .getKvs();
        return keys.stream()
                .sorted(Comparator.comparingLong(KeyValue::getCreateRevision))
                .toList();
    }

    /** Seconds the lease has left according to etcd; -1 once it expired or was revoked. */
    private static long ttl(Client etcd, long lease) throws Exception {
        return etcd.getLeaseClient()
                .timeToLive(lease, LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getTTL();
    }

    /** Waits until the materializer's consumer group has members, and returns their ids. */
    private Set<String> awaitMaterializerMembers(String prefix) throws Exception {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> !materializerMembers(prefix).isEmpty());
        return materializerMembers(prefix);
    }

    private Set<String> materializerMembers(String prefix) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        String group = prefix + ".state-materializer";
        try (Admin admin = Admin.create(props)) {
            return admin
                    .describeConsumerGroups(List.of(group))
                    .describedGroups()
                    .get(group)
                    .get(10, TimeUnit.SECONDS)
                    .members()
                    .stream()
                    .map(MemberDescription::consumerId)
                    .collect(Collectors.toSet());
        }
    }

    /** Waits until the events topic holds {@code revision}. */
    private void awaitPublished(String events, long revision) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            List<ConsumerRecord<byte[], EventsRecord>> r = EventsTopicDump.read(kafka.bootstrapServers(), events);
            return !r.isEmpty() && EventsRecords.revision(r.get(r.size() - 1).value()) >= revision;
        });
    }

    private static String log(JavaProcess p) throws Exception {
        return Files.readString(p.logFile());
    }
}
