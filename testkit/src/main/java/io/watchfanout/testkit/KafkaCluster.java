package io.watchfanout.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replicated Kafka as production runs it, on loopback: {@code size} (default 3) KRaft nodes,
 * each a {@link KafkaBroker} child JVM with {@code process.roles=broker,controller}, all of them
 * voters of one static controller quorum ({@code controller.quorum.voters}), formatted with the
 * same cluster id.
 *
 * <p>With three or more nodes the cluster replicates as a production one should: default
 * replication factor 3 and {@code min.insync.replicas} 2 for topics and for Kafka's own
 * {@code __consumer_offsets} and {@code __transaction_state} (so that exactly-once producers and
 * Kafka Streams survive the loss of one broker); with fewer, the replication factor is the size
 * and the minimum in-sync replicas 1. Each broker runs with {@code -Xmx384m} unless
 * {@link Builder#configure(Consumer)} says otherwise; everything else is {@link KafkaBroker}'s.
 *
 * <p>Usage:
 * <pre>{@code
 * try (KafkaCluster kafka = KafkaCluster.builder().build().start()) {
 *     ... Map.of("bootstrap.servers", kafka.bootstrapServers()) ...
 *     KafkaBroker leader = kafka.leader("watch.events");
 *     leader.kill();                    // SIGKILL: the others elect a new leader
 *     leader.start();                   // same data, same ports; catches up as a follower
 *     kafka.awaitFullyReplicated(Duration.ofSeconds(60), "watch.events");
 * }
 * }</pre>
 *
 * <p>Thread-safety: the brokers' lifecycle methods are thread-safe ({@link KafkaBroker}); the
 * queries here each use a short-lived admin client and may be called from any thread.
 */
public final class KafkaCluster implements AutoCloseable {
    /** Default maximum heap of each broker JVM: three of them share a CI machine. */
    public static final String DEFAULT_MAX_HEAP = "384m";

    private static final Logger LOG = LoggerFactory.getLogger(KafkaCluster.class);
    private static final long ADMIN_TIMEOUT_MS = 10_000;

    private final List<KafkaBroker> brokers;

    private KafkaCluster(Builder b) {
        int size = b.size;
        int[] brokerPorts = ports(b.brokerPorts, size);
        int[] controllerPorts = ports(b.controllerPorts, size);
        String clusterId = b.clusterId != null ? b.clusterId : Uuid.randomUuid().toString();
        Path root = b.workDir != null ? b.workDir.toAbsolutePath() : WorkDirs.newInstanceDir("kafka-cluster");
        StringBuilder voters = new StringBuilder();
        for (int i = 0; i < size; i++) {
            voters.append(i == 0 ? "" : ",").append(i + 1).append("@127.0.0.1:").append(controllerPorts[i]);
        }
        int replication = Math.min(3, size);
        String minIsr = Integer.toString(replication >= 3 ? 2 : 1);
        List<KafkaBroker> built = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            KafkaBroker.Builder broker = KafkaBroker.builder()
                    .nodeId(i + 1)
                    .brokerPort(brokerPorts[i])
                    .controllerPort(controllerPorts[i])
                    .quorumVoters(voters.toString())
                    .clusterId(clusterId)
                    .workDir(root.resolve("kafka-" + (i + 1)))
                    .maxHeap(DEFAULT_MAX_HEAP)
                    .brokerProperty("default.replication.factor", Integer.toString(replication))
                    .brokerProperty("min.insync.replicas", minIsr)
                    .brokerProperty("offsets.topic.replication.factor", Integer.toString(replication))
                    .brokerProperty("transaction.state.log.replication.factor", Integer.toString(replication))
                    .brokerProperty("transaction.state.log.min.isr", minIsr)
                    .brokerProperty("share.coordinator.state.topic.replication.factor", Integer.toString(replication))
                    .brokerProperty("share.coordinator.state.topic.min.isr", minIsr)
                    // A replica may lose data it has not flushed when its broker is killed; it
                    // must never become leader then. Kafka's default, stated because the tests
                    // rely on it.
                    .brokerProperty("unclean.leader.election.enable", "false");
            b.customizer.accept(broker);
            built.add(broker.build());
        }
        this.brokers = List.copyOf(built);
    }

    private static int[] ports(List<Integer> fixed, int size) {
        if (fixed.isEmpty()) {
            return FreePorts.pick(size);
        }
        if (fixed.size() != size) {
            throw new IllegalArgumentException("ports: " + fixed + " (expected: " + size + " of them, one per broker)");
        }
        return fixed.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * Returns a builder for a cluster with non-default settings.
     *
     * @return a new builder; not thread-safe
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Launches every broker (formatting its storage on the first start), then waits until each
     * is registered and unfenced. The brokers start together: none of them can be ready before a
     * majority of the quorum runs. Takes 10–20 s for three brokers on a 2-core machine.
     *
     * @return this cluster
     * @throws IllegalStateException as {@link KafkaBroker#start()}, for the first broker that fails;
     *     the brokers already launched keep running until {@link #close()}
     */
    public KafkaCluster start() {
        long startNanos = System.nanoTime();
        forEachBrokerAtOnce(KafkaBroker::prepareStorage, "format-kafka-");
        for (KafkaBroker broker : brokers) {
            broker.launch();
        }
        for (KafkaBroker broker : brokers) {
            broker.awaitReady();
        }
        LOG.info(
                "Kafka cluster of {} ready at {} in {} ms",
                brokers.size(),
                bootstrapServers(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        return this;
    }

    /**
     * The {@code bootstrap.servers} value for clients: every broker, so that a client starting
     * while one is down still finds the others.
     *
     * @return {@code 127.0.0.1:<port1>,127.0.0.1:<port2>,...}; stable across restarts
     */
    public String bootstrapServers() {
        return brokers.stream().map(KafkaBroker::bootstrapServers).collect(Collectors.joining(","));
    }

    /**
     * The brokers, in node id order (node ids 1..size).
     *
     * @return an unmodifiable list
     */
    public List<KafkaBroker> brokers() {
        return brokers;
    }

    /**
     * The broker with a node id.
     *
     * @param nodeId 1..size
     * @return the broker
     * @throws IllegalArgumentException if there is no such node
     */
    public KafkaBroker broker(int nodeId) {
        if (nodeId < 1 || nodeId > brokers.size()) {
            throw new IllegalArgumentException("nodeId: " + nodeId + " (expected: 1.." + brokers.size() + ")");
        }
        return brokers.get(nodeId - 1);
    }

    /**
     * The current leader of partition 0 of a topic, as the cluster's metadata says
     * ({@code describeTopics}).
     *
     * @param topic the topic
     * @return the leading broker
     * @throws IllegalStateException if the partition has no leader or the cluster does not answer
     */
    public KafkaBroker leader(String topic) {
        return leader(new TopicPartition(topic, 0));
    }

    /**
     * The current leader of a partition ({@code describeTopics}).
     *
     * @param partition the topic partition
     * @return the leading broker
     * @throws IllegalStateException if the partition has no leader or the cluster does not answer
     */
    public KafkaBroker leader(TopicPartition partition) {
        Node leader = describe(partition).leader();
        if (leader == null || leader.isEmpty()) {
            throw new IllegalStateException(partition + " has no leader");
        }
        return broker(leader.id());
    }

    /**
     * The replicas and in-sync replicas of a partition ({@code describeTopics}).
     *
     * @param partition the topic partition
     * @return its description, from a running broker
     * @throws IllegalStateException if the topic or partition does not exist or no broker answers
     */
    public TopicPartitionInfo describe(TopicPartition partition) {
        return withAdmin(admin -> {
            TopicDescription d = admin.describeTopics(List.of(partition.topic()))
                    .allTopicNames()
                    .get(ADMIN_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .get(partition.topic());
            return d.partitions().stream()
                    .filter(p -> p.partition() == partition.partition())
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException(partition + " does not exist"));
        });
    }

    /**
     * Makes a broker the leader of a partition: moves it to the head of the replica list (a
     * reassignment onto the same replicas, which copies nothing) and runs a preferred leader
     * election. Tests use it to give two topics different leaders before killing one.
     *
     * @param partition the topic partition
     * @param nodeId a broker holding an in-sync replica of it
     * @throws IllegalStateException if the broker holds no replica or the election fails
     */
    public void moveLeader(TopicPartition partition, int nodeId) {
        TopicPartitionInfo info = describe(partition);
        List<Integer> replicas =
                new ArrayList<>(info.replicas().stream().map(Node::id).toList());
        if (!replicas.remove(Integer.valueOf(nodeId))) {
            throw new IllegalStateException(
                    "node " + nodeId + " holds no replica of " + partition + " (replicas " + info.replicas() + ")");
        }
        replicas.add(0, nodeId);
        withAdmin(admin -> {
            admin.alterPartitionReassignments(Map.of(partition, Optional.of(new NewPartitionReassignment(replicas))))
                    .all()
                    .get(ADMIN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ADMIN_TIMEOUT_MS * 3);
            while (leaderId(admin, partition) != nodeId) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("node " + nodeId + " did not become the leader of " + partition);
                }
                try {
                    admin.electLeaders(ElectionType.PREFERRED, Set.of(partition))
                            .partitions()
                            .get(ADMIN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    LOG.debug(
                            "preferred leader election of {}: {}",
                            partition,
                            e.getCause().toString());
                }
                ManagedProcess.sleep(200);
            }
            return null;
        });
        LOG.info("node {} leads {}", nodeId, partition);
    }

    private static int leaderId(Admin admin, TopicPartition partition) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(partition.topic()))
                .allTopicNames()
                .get(ADMIN_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .get(partition.topic());
        Node leader = d.partitions().get(partition.partition()).leader();
        return leader == null ? -1 : leader.id();
    }

    /**
     * Waits until every partition of the topics has all its replicas in sync, e.g. after a
     * killed broker was started again and before the next fault.
     *
     * @param timeout how long to wait
     * @param topics the topics; none for every topic, Kafka's internal ones
     *     ({@code __consumer_offsets}, {@code __transaction_state}) included: a second fault
     *     before those have caught up could leave one of their partitions below
     *     {@code min.insync.replicas}
     * @throws IllegalStateException on timeout, naming the partitions still short of replicas
     */
    public void awaitFullyReplicated(Duration timeout, String... topics) {
        long deadline = System.nanoTime() + timeout.toNanos();
        withAdmin(admin -> {
            String lagging = "";
            while (true) {
                try {
                    List<String> names = topics.length > 0
                            ? List.of(topics)
                            : List.copyOf(admin.listTopics(new ListTopicsOptions().listInternal(true))
                                    .names()
                                    .get(ADMIN_TIMEOUT_MS, TimeUnit.MILLISECONDS));
                    lagging = admin
                            .describeTopics(names)
                            .allTopicNames()
                            .get(ADMIN_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                            .values()
                            .stream()
                            .flatMap(d -> d.partitions().stream()
                                    .filter(p -> p.isr().size() < p.replicas().size())
                                    .map(p -> d.name() + "-" + p.partition() + " isr " + ids(p.isr()) + " of "
                                            + ids(p.replicas())))
                            .collect(Collectors.joining(", "));
                    if (lagging.isEmpty()) {
                        return null;
                    }
                } catch (ExecutionException | TimeoutException e) {
                    lagging = e.toString();
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "not fully replicated within " + timeout.toMillis() + " ms: " + lagging);
                }
                ManagedProcess.sleep(200);
            }
        });
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    /**
     * Stops every broker at once (SIGTERM, SIGKILL after the stop timeout) and deletes their data
     * directories unless data is to be kept. In parallel, because a broker stopped after the
     * others can no longer reach a controller majority and would wait out its controlled shutdown.
     * Idempotent.
     */
    @Override
    public void close() {
        forEachBrokerAtOnce(KafkaBroker::close, "stop-kafka-");
    }

    /** Runs {@code action} on every broker, each on a thread of its own; rethrows the first failure. */
    private void forEachBrokerAtOnce(Consumer<KafkaBroker> action, String threadPrefix) {
        List<Thread> threads = new ArrayList<>();
        List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());
        for (KafkaBroker broker : brokers) {
            Thread t = new Thread(
                    () -> {
                        try {
                            action.accept(broker);
                        } catch (RuntimeException e) {
                            failures.add(e);
                        }
                    },
                    threadPrefix + broker.nodeId());
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                throw ManagedProcess.interrupted("waiting for " + t.getName(), e);
            }
        }
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
    }

    private <T> T withAdmin(AdminCall<T> call) {
        try (Admin admin = Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers(),
                AdminClientConfig.CLIENT_ID_CONFIG,
                "testkit-cluster",
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                5000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                (int) ADMIN_TIMEOUT_MS,
                AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG,
                500))) {
            return call.apply(admin);
        } catch (InterruptedException e) {
            throw ManagedProcess.interrupted("asking the Kafka cluster", e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("Kafka cluster at " + bootstrapServers() + ": " + e, e);
        }
    }

    @FunctionalInterface
    private interface AdminCall<T> {
        T apply(Admin admin) throws Exception;
    }

    @Override
    public String toString() {
        return "KafkaCluster{" + bootstrapServers() + "}";
    }

    /**
     * Settings of a {@link KafkaCluster}. Not thread-safe; each setter returns this builder.
     */
    public static final class Builder {
        private int size = 3;
        private List<Integer> brokerPorts = List.of();
        private List<Integer> controllerPorts = List.of();
        private Path workDir;
        private String clusterId;
        private Consumer<KafkaBroker.Builder> customizer = b -> {};

        private Builder() {}

        /**
         * How many brokers (each also a controller and a voter); default 3.
         *
         * @param size 1..9
         * @return this builder
         * @throws IllegalArgumentException if outside 1..9
         */
        public Builder size(int size) {
            if (size < 1 || size > 9) {
                throw new IllegalArgumentException("size: " + size + " (expected: 1..9)");
            }
            this.size = size;
            return this;
        }

        /**
         * Fixed PLAINTEXT ports, one per broker in node id order; default free ports.
         *
         * @param ports TCP ports on 127.0.0.1
         * @return this builder
         */
        public Builder brokerPorts(List<Integer> ports) {
            this.brokerPorts = List.copyOf(ports);
            return this;
        }

        /**
         * Fixed CONTROLLER ports, one per broker in node id order; default free ports.
         *
         * @param ports TCP ports on 127.0.0.1
         * @return this builder
         */
        public Builder controllerPorts(List<Integer> ports) {
            this.controllerPorts = List.copyOf(ports);
            return this;
        }

        /**
         * The directory holding one {@code kafka-<nodeId>/} work directory per broker; default a
         * new directory under {@code target/testkit}.
         *
         * @param dir the directory
         * @return this builder
         */
        public Builder workDir(Path dir) {
            this.workDir = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * The cluster id every broker's storage is formatted with; default a random {@link Uuid}.
         * Set it to reuse the data of an earlier run.
         *
         * @param clusterId a base64 Kafka Uuid (22 characters)
         * @return this builder
         */
        public Builder clusterId(String clusterId) {
            this.clusterId = Objects.requireNonNull(clusterId, "clusterId");
            return this;
        }

        /**
         * Adjusts every broker's {@link KafkaBroker.Builder} after the cluster has set node id,
         * ports, quorum, cluster id, work directory, heap and replication properties: class path,
         * heap, timeouts, {@code keepData}, more broker properties.
         *
         * @param customizer called once per broker
         * @return this builder
         */
        public Builder configure(Consumer<KafkaBroker.Builder> customizer) {
            this.customizer = Objects.requireNonNull(customizer, "customizer");
            return this;
        }

        /**
         * Creates the cluster (picks its ports; starts nothing).
         *
         * @return a new cluster
         */
        public KafkaCluster build() {
            return new KafkaCluster(this);
        }
    }
}
