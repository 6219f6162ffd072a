package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.support.StateTopicDump;
import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.StateRecordDeserializer;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaCluster;
import io.watchfanout.testkit.TestPrefix;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Kafka as production runs it — three brokers, replication factor 3, {@code min.insync.replicas}
 * 2, {@code acks=all} — loses the leader of the events topic, and later the leader of the state
 * topic, to SIGKILL while etcd is written to and the ingester (a child JVM, with its state
 * materializer) publishes: the ingester goes on once a new leader is elected, and afterwards the
 * events topic equals etcd's own watch and the state topic equals etcd, nothing lost and nothing
 * twice. A reader tailing the faulted topic, as a fan-out node does, measures the stall: from the
 * kill to the first record of an etcd write made after it. The stall is printed ({@code STALL}
 * lines in the test output), not asserted: it depends on the machine. It is mostly the
 * controller's {@code broker.session.timeout.ms} (3 s in the testkit) before it fences the dead
 * broker and elects new leaders, plus the clients' metadata refresh.
 */
@ExtendWith(EtcdExtension.class)
class ReplicatedKafkaTest {
    private static KafkaCluster kafka;
    private final EtcdServer etcdServer;
    private Client etcd;
    private String topicPrefix;
    private String keyPrefix;

    ReplicatedKafkaTest(EtcdServer etcdServer) {
        this.etcdServer = etcdServer;
    }

    @BeforeAll
    static void startKafka() {
        // Three broker JVMs start (and one restarts twice) on a 2-core machine: the client
        // compiler alone and a serial collector leave more of it to the brokers' own work.
        kafka = KafkaCluster.builder()
                .configure(b -> b.jvmArg("-XX:TieredStopAtLevel=1").jvmArg("-XX:+UseSerialGC"))
                .build()
                .start();
    }

    @AfterAll
    static void stopKafka() {
        if (kafka != null) {
            kafka.close();
        }
    }

    @BeforeEach
    void setUp(Client client, TestPrefix prefix) {
        etcd = client;
        topicPrefix = prefix.topicPrefix();
        keyPrefix = prefix.keyPrefix();
    }

    /** The ingester on the three brokers: replication factor 3, min.insync.replicas 2, and {@code extra}. */
    private JavaProcess replicatedIngester(String... extra) {
        List<String> flags = new ArrayList<>(List.of("--replication-factor", "3", "--min-insync-replicas", "2"));
        flags.addAll(List.of(extra));
        return Ingesters.process(
                "ingester",
                etcdServer.clientUrl(),
                kafka.bootstrapServers(),
                topicPrefix,
                keyPrefix,
                flags.toArray(String[]::new));
    }

    /**
     * One ingester, two faults in turn, each with a reader's stall measured: the events topic's
     * leader, then (once the first broker is back in sync) the state topic's. One test rather
     * than two, because starting the ingester and checking the topics cost more than a fault.
     */
    @Test
    void killingTheLeaderOfEitherTopicLosesAndRepeatsNothing() throws Exception {
        String events = WatchFanoutSerdes.eventsTopic(topicPrefix);
        String state = WatchFanoutSerdes.stateTopic(topicPrefix);
        try (JavaProcess ingester = replicatedIngester();
                BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 20)) {
            ingester.awaitLog("watching etcd from revision", Duration.ofSeconds(90));
            killTheLeaderOf(events, state, ingester, new EventsRecordDeserializer(), EventsRecords::revision);
            // The state topic's records that carry a revision are the materializer's checkpoints.
            killTheLeaderOf(
                    state,
                    events,
                    ingester,
                    new StateRecordDeserializer(),
                    r -> r != null && r.hasCheckpoint() ? r.getCheckpoint().getRevision() : -1);
            Thread.sleep(1000); // more writes with all three brokers back
            writer.stop();
            assertThat(writer.operations()).isPositive();
            assertThat(ingester.isAlive()).isTrue();
            assertExact();
            System.out.printf(
                    Locale.ROOT,
                    "ingester retries (\"retrying in\" lines) over both faults: %d%n",
                    logLines(ingester, "retrying in"));
        }
    }

    /**
     * The broker that coordinates the ingester's transactions (not the events topic's leader) is
     * killed while the ingester, under leader election with the fault run's 5 s lease, commits
     * a transaction every few tens of milliseconds. A commit caught by the kill waits for the
     * coordinator to move to another broker: the ingester waits for it again on the same producer
     * rather than start a new session (a new producer's {@code initTransactions()} would wait for
     * the same coordinator), and nothing is lost or repeated.
     */
    @Test
    void killingTheTransactionCoordinatorKeepsTheProducer() throws Exception {
        String events = WatchFanoutSerdes.eventsTopic(topicPrefix);
        String transactionalId = topicPrefix + ".ingester";
        try (JavaProcess ingester = replicatedIngester("--leader-election", "--election-lease-ttl", "5s");
                BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 20);
                Tail<EventsRecord> tail = new Tail<>(
                        kafka.bootstrapServers(), events, new EventsRecordDeserializer(), EventsRecords::revision)) {
            ingester.awaitLog("watching etcd from revision", Duration.ofSeconds(90));
            long warmUp = EtcdWorkload.currentRevision(etcd);
            await().atMost(Duration.ofSeconds(60)).until(() -> tail.lastRevision() > warmUp);
            int coordinator = transactionCoordinator(transactionalId);
            if (kafka.leader(events).nodeId() == coordinator) {
                // The coordinator alone: a dead partition leader stalls the sends, not the commit.
                kafka.moveLeader(
                        new TopicPartition(events, 0),
                        coordinator % kafka.brokers().size() + 1);
            }
            KafkaBroker victim = kafka.broker(coordinator);
            long killedAt = System.nanoTime();
            victim.kill();
            long revisionAtKill = EtcdWorkload.currentRevision(etcd);
            tail.firstArrivalAbove(revisionAtKill);
            await().atMost(Duration.ofSeconds(90)).until(() -> tail.firstArrivalAbove(revisionAtKill) > 0);
            System.out.printf(
                    Locale.ROOT,
                    "STALL %s: SIGKILL of the transaction coordinator, node %d -> the first record of an etcd write made"
                            + " after the kill was read %d ms later; commits waited for again: %d%n",
                    events,
                    coordinator,
                    TimeUnit.NANOSECONDS.toMillis(tail.firstArrivalAbove(revisionAtKill) - killedAt),
                    logLines(ingester, "waiting for it again on the same producer"));
            assertThat(transactionCoordinator(transactionalId)).isNotEqualTo(coordinator);
            Thread.sleep(1000); // more writes with one broker down
            victim.start();
            kafka.awaitFullyReplicated(Duration.ofSeconds(90));
            writer.stop();
            assertThat(writer.operations()).isPositive();
            assertThat(ingester.isAlive()).isTrue();
            assertExact();
            // Each session after the first (which found the topic empty) resumes with a new producer.
            assertThat(logLines(ingester, "resuming after the last revision"))
                    .as("sessions of the ingester after its first")
                    .isZero();
        }
    }

    /** The broker that coordinates the transactions of {@code transactionalId}. */
    private static int transactionCoordinator(String transactionalId) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            return admin.describeTransactions(List.of(transactionalId))
                    .description(transactionalId)
                    .get(30, TimeUnit.SECONDS)
                    .coordinatorId();
        }
    }

    private static long logLines(JavaProcess process, String containing) throws java.io.IOException {
        return Files.readAllLines(process.logFile()).stream()
                .filter(l -> l.contains(containing))
                .count();
    }

    /**
     * Kills the leader of {@code victimTopic} (after making sure it does not also lead
     * {@code otherTopic}, so that each fault hits one topic), measures the stall on a tail of
     * {@code victimTopic}, starts the broker again and waits until every partition is in sync.
     */
    private <V> void killTheLeaderOf(
            String victimTopic,
            String otherTopic,
            JavaProcess ingester,
            Deserializer<V> deserializer,
            ToLongFunction<V> revisionOf)
            throws Exception {
        separateLeaders(victimTopic, otherTopic);
        try (Tail<V> tail = new Tail<>(kafka.bootstrapServers(), victimTopic, deserializer, revisionOf)) {
            // Some traffic first, so that the tail has a normal gap between records to compare with.
            long warmUp = EtcdWorkload.currentRevision(etcd);
            await().atMost(Duration.ofSeconds(60)).until(() -> tail.lastRevision() > warmUp);
            Thread.sleep(1000);
            long normalGapMs = tail.maxGapMillis();

            KafkaBroker victim = kafka.leader(victimTopic);
            long killedAt = System.nanoTime();
            victim.kill();
            long revisionAtKill = EtcdWorkload.currentRevision(etcd);
            tail.firstArrivalAbove(revisionAtKill); // from now on
            await().atMost(Duration.ofSeconds(90)).until(() -> tail.firstArrivalAbove(revisionAtKill) > 0);
            long stallMs = TimeUnit.NANOSECONDS.toMillis(tail.firstArrivalAbove(revisionAtKill) - killedAt);
            int newLeader = kafka.leader(victimTopic).nodeId();
            System.out.printf(
                    Locale.ROOT,
                    "STALL %s: SIGKILL of its leader, node %d -> the first record of an etcd write"
                            + " made after the kill was read %d ms later; new leader node %d; largest gap between records in the"
                            + " second before the kill %d ms%n",
                    victimTopic,
                    victim.nodeId(),
                    stallMs,
                    newLeader,
                    normalGapMs);
            assertThat(newLeader).isNotEqualTo(victim.nodeId());
            assertThat(ingester.isAlive()).as("the ingester after the kill").isTrue();

            Thread.sleep(1000); // more writes with one broker down
            long restartedAt = System.nanoTime();
            victim.start();
            // Kafka's own topics too: a second fault before they are back in sync could leave a
            // partition of __transaction_state below min.insync.replicas.
            kafka.awaitFullyReplicated(Duration.ofSeconds(90));
            System.out.printf(
                    Locale.ROOT,
                    "RESTART node %d: every partition in sync again %d ms after its start%n",
                    victim.nodeId(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartedAt));
        }
    }

    /** Moves the leader of {@code otherTopic} away from {@code victimTopic}'s leader, if they share one. */
    private void separateLeaders(String victimTopic, String otherTopic) {
        int victim = kafka.leader(victimTopic).nodeId();
        if (kafka.leader(otherTopic).nodeId() == victim) {
            kafka.moveLeader(
                    new TopicPartition(otherTopic, 0), victim % kafka.brokers().size() + 1);
        }
    }

    /** Both topics equal etcd once the ingester and the materializer have caught up. */
    private void assertExact() throws Exception {
        String events = WatchFanoutSerdes.eventsTopic(topicPrefix);
        String state = WatchFanoutSerdes.stateTopic(topicPrefix);
        long until = EtcdWorkload.currentRevision(etcd);
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    List<ConsumerRecord<byte[], EventsRecord>> records =
                            EventsTopicDump.read(kafka.bootstrapServers(), events);
                    return !records.isEmpty()
                            && EventsRecords.revision(
                                            records.get(records.size() - 1).value())
                                    >= until;
                });
        List<ConsumerRecord<byte[], EventsRecord>> records = EventsTopicDump.read(kafka.bootstrapServers(), events);
        int compared = Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), until);
        assertThat(compared).isPositive();
        long lastPublished =
                EventsRecords.revision(records.get(records.size() - 1).value());
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> StateTopicDump.read(kafka.bootstrapServers(), state)
                                .checkpoint()
                                .getRevision()
                        >= lastPublished);
        Exactness.assertStateEqualsEtcd(StateTopicDump.read(kafka.bootstrapServers(), state), etcd, keyPrefix);
    }

    /**
     * A read_committed consumer following partition 0 of a topic on its own thread, noting when
     * each record carrying a revision arrived: what a fan-out node tailing the topic would see.
     */
    private static final class Tail<V> implements AutoCloseable {
        private final KafkaConsumer<byte[], V> consumer;
        private final ToLongFunction<V> revisionOf;
        private final Thread thread;
        private volatile boolean running = true;
        private volatile long lastRevision = -1;
        private long lastArrival; // guarded by this
        private long maxGapNanos; // guarded by this
        private long firstAbove = -1; // guarded by this: threshold of the pending query
        private long firstAboveArrival; // guarded by this

        Tail(String bootstrap, String topic, Deserializer<V> deserializer, ToLongFunction<V> revisionOf) {
            Properties props = new Properties();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), deserializer);
            this.revisionOf = revisionOf;
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToEnd(List.of(tp));
            this.thread = new Thread(this::run, "tail-" + topic);
            thread.start();
        }

        private void run() {
            while (running) {
                for (ConsumerRecord<byte[], V> r : consumer.poll(Duration.ofMillis(50))) {
                    long revision = revisionOf.applyAsLong(r.value());
                    if (revision < 0) {
                        continue;
                    }
                    long now = System.nanoTime();
                    synchronized (this) {
                        if (lastArrival != 0) {
                            maxGapNanos = Math.max(maxGapNanos, now - lastArrival);
                        }
                        lastArrival = now;
                        if (firstAbove >= 0 && firstAboveArrival == 0 && revision > firstAbove) {
                            firstAboveArrival = now;
                        }
                    }
                    lastRevision = Math.max(lastRevision, revision);
                }
            }
        }

        long lastRevision() {
            return lastRevision;
        }

        synchronized long maxGapMillis() {
            return TimeUnit.NANOSECONDS.toMillis(maxGapNanos);
        }

        /** When the first record above {@code revision} arrived (nanoTime); 0 while none has. */
        synchronized long firstArrivalAbove(long revision) {
            if (firstAbove != revision) {
                firstAbove = revision;
                firstAboveArrival = 0;
            }
            return firstAboveArrival;
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(1)));
        }
    }
}
