package io.watchfanout.ingester.topics;

import io.watchfanout.common.KafkaClientSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.InvalidMetadataException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the events and state topics with the right settings when they are missing, and
 * checks the settings of topics that exist (docs/ARCHITECTURE.md, "Kafka topics"): the events topic
 * has one partition (total order, as etcd's single Raft log) and delete cleanup; the state
 * topic is compacted (and only compacted: time deletion would lose keys); both accept
 * records of {@code maxRecordBytes}; both have at least the replication factor and
 * {@code min.insync.replicas} asked for, and no more in-sync replicas required than there are
 * replicas (every {@code acks=all} write would fail).
 *
 * <p>The state topic is created with an explicit {@code delete.retention.ms}
 * ({@link #STATE_DELETE_RETENTION}) rather than the broker's {@code log.cleaner.delete.retention.ms}:
 * a reader rebuilding from the state topic (a fan-out node at start) must see the tombstone of
 * every key deleted after it read the key's value, and the cleaner keeps a tombstone only that
 * long once it has compacted past it. Every such reader trusts its read only if it took less than
 * half of that ({@link io.watchfanout.schema.StateScan}) and reads again otherwise, so a short
 * setting never brings a deleted key back, but may keep a slow node rebuilding; with a day
 * against rebuilds of seconds to minutes there is room to spare.
 *
 * <p>The state topic is compacted eagerly ({@link StateCompaction}: a one-minute segment, a dirty
 * ratio of 0.1), so that a rebuild reads about one record per key however long the keys churned;
 * an existing state topic that compacts less eagerly gets those settings here, and keeps its own
 * with a warning when Kafka refuses the change.
 *
 * <p>Thread-safe (stateless over a thread-safe admin client).
 */
public final class TopicManager {
    private static final Logger log = LoggerFactory.getLogger(TopicManager.class);
    private static final long TIMEOUT_MS = 30_000;
    /**
     * {@code delete.retention.ms} of a new state topic: how long a tombstone stays readable after
     * compaction reached it; a rebuild's read of the state topic must take less than half of it. Kafka's
     * default, set explicitly so that a broker-wide change does not silently shorten it.
     */
    public static final Duration STATE_DELETE_RETENTION = Duration.ofDays(1);
    /** Below this an existing state topic's {@code delete.retention.ms} draws a warning. */
    static final Duration STATE_DELETE_RETENTION_WARNING = Duration.ofHours(1);

    private final String bootstrap;
    private final KafkaClientSettings settings;

    /**
     * @param bootstrap Kafka bootstrap servers
     * @param settings the {@code --kafka-config} client settings
     */
    public TopicManager(String bootstrap, KafkaClientSettings settings) {
        this.bootstrap = bootstrap;
        this.settings = settings;
    }

    /**
     * Creates missing topics, then checks both.
     *
     * @throws TopicMisconfiguredException when an existing topic's settings are wrong
     * @throws ExecutionException when Kafka refuses a request
     * @throws TimeoutException when Kafka does not answer within 30 s
     * @throws InterruptedException when interrupted
     */
    public void ensure(TopicSettings s) throws ExecutionException, TimeoutException, InterruptedException {
        Properties props = new Properties();
        settings.applyTo(props);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
        try (Admin admin = Admin.create(props)) {
            Set<String> existing = admin.listTopics().names().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Optional<Short> rf = s.replicationFactor() < 0 ? Optional.empty() : Optional.of(s.replicationFactor());
            List<NewTopic> missing = new ArrayList<>();
            if (!existing.contains(s.eventsTopic())) {
                Map<String, String> configs = new LinkedHashMap<>();
                configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE);
                configs.put(
                        TopicConfig.RETENTION_MS_CONFIG,
                        Long.toString(s.eventsRetention().toMillis()));
                configs.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(s.maxRecordBytes()));
                missing.add(new NewTopic(s.eventsTopic(), Optional.of(1), rf).configs(withMinIsr(configs, s)));
            }
            if (!existing.contains(s.stateTopic())) {
                Map<String, String> configs = new LinkedHashMap<>();
                configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
                configs.putAll(StateCompaction.settings());
                configs.put(TopicConfig.DELETE_RETENTION_MS_CONFIG, Long.toString(STATE_DELETE_RETENTION.toMillis()));
                configs.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(s.maxRecordBytes()));
                missing.add(new NewTopic(s.stateTopic(), Optional.of(s.statePartitions()), rf)
                        .configs(withMinIsr(configs, s)));
            }
            for (NewTopic topic : missing) {
                try {
                    admin.createTopics(List.of(topic)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    log.info(
                            "created topic {} ({} partition(s), {})",
                            topic.name(),
                            topic.numPartitions(),
                            topic.configs());
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
            if (!missing.isEmpty()) {
                awaitServed(admin, missing.stream().map(NewTopic::name).toList());
            }
            check(admin, s);
        }
    }

    private static Map<String, String> withMinIsr(Map<String, String> configs, TopicSettings s) {
        if (s.minInsyncReplicas() > 0) {
            configs.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(s.minInsyncReplicas()));
        }
        return configs;
    }

    /**
     * Waits until the brokers serve topics just created: the controller acknowledges a creation
     * before every broker has applied it, and until then describing the topic or reading its
     * offsets answers UNKNOWN_TOPIC_OR_PARTITION (or NOT_LEADER_OR_FOLLOWER). Waiting here, where
     * that answer is expected, keeps it out of the clients that start next (the checks below, the
     * publisher, the materializer), for which it would be a warning and a retry on every first
     * start. Other errors, and the same errors after the timeout, are thrown.
     */
    private static void awaitServed(Admin admin, List<String> names)
            throws ExecutionException, TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (true) {
            try {
                Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
                admin.describeTopics(names)
                        .allTopicNames()
                        .get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
                        .values()
                        .forEach(d -> d.partitions()
                                .forEach(p ->
                                        ends.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest())));
                admin.listOffsets(ends).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof InvalidMetadataException) || System.nanoTime() > deadline) {
                    throw e;
                }
                log.debug(
                        "topics {} not served yet ({}); waiting",
                        names,
                        e.getCause().toString());
                Thread.sleep(50);
            }
        }
    }

    private void check(Admin admin, TopicSettings s) throws ExecutionException, TimeoutException, InterruptedException {
        Map<String, TopicDescription> topics = admin.describeTopics(List.of(s.eventsTopic(), s.stateTopic()))
                .allTopicNames()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        int eventsPartitions = topics.get(s.eventsTopic()).partitions().size();
        if (eventsPartitions != 1) {
            throw new TopicMisconfiguredException(
                    "topic " + s.eventsTopic() + " has " + eventsPartitions
                            + " partitions (expected: 1, so that events keep etcd's total order); delete it or choose another --topic-prefix");
        }
        ConfigResource events = new ConfigResource(ConfigResource.Type.TOPIC, s.eventsTopic());
        ConfigResource state = new ConfigResource(ConfigResource.Type.TOPIC, s.stateTopic());
        Map<ConfigResource, Config> configs =
                admin.describeConfigs(List.of(events, state)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        String eventsCleanup = value(configs.get(events), TopicConfig.CLEANUP_POLICY_CONFIG);
        if (eventsCleanup.contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
            throw new TopicMisconfiguredException("topic " + s.eventsTopic() + " has cleanup.policy=" + eventsCleanup
                    + " (expected: delete; compaction would drop events of the same key)");
        }
        String stateCleanup = value(configs.get(state), TopicConfig.CLEANUP_POLICY_CONFIG);
        if (!stateCleanup.equals(TopicConfig.CLEANUP_POLICY_COMPACT)) {
            throw new TopicMisconfiguredException("topic " + s.stateTopic() + " has cleanup.policy=" + stateCleanup
                    + " (expected: compact; time or size deletion would lose keys)");
        }
        for (ConfigResource r : List.of(events, state)) {
            long max = Long.parseLong(value(configs.get(r), TopicConfig.MAX_MESSAGE_BYTES_CONFIG));
            if (max < s.maxRecordBytes()) {
                throw new TopicMisconfiguredException("topic " + r.name() + " has max.message.bytes=" + max
                        + " (expected: >= " + s.maxRecordBytes() + ", twice etcd's largest value plus overhead, "
                        + "since prev_kv rides along); raise it with kafka-configs.sh or lower --max-record-bytes");
            }
            int replicas = topics.get(r.name()).partitions().stream()
                    .mapToInt(p -> p.replicas().size())
                    .min()
                    .orElse(0);
            int minIsr = Integer.parseInt(value(configs.get(r), TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG));
            checkReplication(r.name(), replicas, minIsr, s);
        }
        long deleteRetention = Long.parseLong(value(configs.get(state), TopicConfig.DELETE_RETENTION_MS_CONFIG));
        if (deleteRetention < STATE_DELETE_RETENTION_WARNING.toMillis()) {
            log.warn(
                    "topic {} has delete.retention.ms={}: a fan-out node whose rebuild reads the state topic for half "
                            + "of that or longer drops what it read and starts again, and may never be ready; {} ms is "
                            + "the default of new state topics",
                    s.stateTopic(),
                    deleteRetention,
                    STATE_DELETE_RETENTION.toMillis());
        }
        compactSooner(admin, state, configs.get(state));
    }

    /**
     * Gives an existing state topic the {@link StateCompaction} settings it lacks (a topic made
     * by an older ingester rolls its segment hourly and cleans at Kafka's dirty ratio of 0.5).
     * A refusal (no {@code ALTER_CONFIGS} permission on the topic, a broker's alter policy, no
     * answer in time) is a warning: the topic still works, a node's restart only reads more.
     */
    private static void compactSooner(Admin admin, ConfigResource state, Config config) throws InterruptedException {
        Map<String, String> current = new LinkedHashMap<>();
        for (String name : StateCompaction.settings().keySet()) {
            ConfigEntry entry = config.get(name);
            if (entry != null && entry.value() != null) {
                current.put(name, entry.value());
            }
        }
        Map<String, String> change = StateCompaction.toChange(current);
        if (change.isEmpty()) {
            return;
        }
        List<AlterConfigOp> ops = change.entrySet().stream()
                .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET))
                .toList();
        try {
            admin.incrementalAlterConfigs(Map.of(state, ops)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            log.info(
                    "topic {}: set {} (was {}) so that compaction keeps up with updates and a fan-out node's rebuild "
                            + "reads about one record per key",
                    state.name(),
                    change,
                    current);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            String add = change.entrySet().stream()
                    .map(x -> x.getKey() + "=" + x.getValue())
                    .collect(Collectors.joining(","));
            log.warn(
                    "topic {} keeps {}: cannot set {} ({}); going on, but a fan-out node's rebuild reads every update "
                            + "compaction has not dropped yet and slows as they pile up. Grant ALTER_CONFIGS on the "
                            + "topic, or run kafka-configs.sh --alter --entity-type topics --entity-name {} "
                            + "--add-config {}",
                    state.name(),
                    current,
                    change,
                    cause.toString(),
                    state.name(),
                    add);
        }
    }

    /**
     * Checks an existing topic's replication against what was asked for.
     *
     * @param topic the topic's name, for the message
     * @param replicas its replication factor (the fewest replicas of any partition)
     * @param minIsr its {@code min.insync.replicas}
     * @param s what was asked for; -1 asks for nothing
     * @throws TopicMisconfiguredException when the topic has fewer replicas or a lower minimum of
     *     in-sync replicas than asked for, or requires more in-sync replicas than it has
     */
    static void checkReplication(String topic, int replicas, int minIsr, TopicSettings s) {
        if (s.replicationFactor() > 0 && replicas < s.replicationFactor()) {
            throw new TopicMisconfiguredException("topic " + topic + " has replication factor " + replicas
                    + " (expected: >= " + s.replicationFactor() + ", --replication-factor); add replicas with "
                    + "kafka-reassign-partitions.sh, or delete the topic while nothing depends on it");
        }
        if (s.minInsyncReplicas() > 0 && minIsr < s.minInsyncReplicas()) {
            throw new TopicMisconfiguredException("topic " + topic + " has min.insync.replicas=" + minIsr
                    + " (expected: >= " + s.minInsyncReplicas()
                    + ", --min-insync-replicas; below it an acknowledged write "
                    + "may live on fewer brokers and die with them); raise it with kafka-configs.sh --alter --add-config "
                    + "min.insync.replicas=" + s.minInsyncReplicas());
        }
        if (minIsr > replicas) {
            throw new TopicMisconfiguredException("topic " + topic + " has min.insync.replicas=" + minIsr
                    + " but only " + replicas
                    + " replica(s) (expected: min.insync.replicas <= replication factor; every "
                    + "acks=all write would fail with NOT_ENOUGH_REPLICAS)");
        }
        if (replicas > 1 && minIsr < 2) {
            log.warn(
                    "topic {} has {} replicas but min.insync.replicas={}: an acknowledged write may exist on the leader "
                            + "alone and be lost with it; production runs min.insync.replicas=2 with 3 replicas",
                    topic,
                    replicas,
                    minIsr);
        }
    }

    private static String value(Config config, String name) {
        ConfigEntry entry = config.get(name);
        return entry == null || entry.value() == null ? "" : entry.value();
    }
}
