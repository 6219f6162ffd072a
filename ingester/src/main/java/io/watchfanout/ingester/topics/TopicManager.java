package io.watchfanout.ingester.topics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
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
 * checks the settings of topics that exist (ARCHITECTURE.md, "Topics"): the events topic
 * has one partition (total order, as etcd's single Raft log) and delete cleanup; the state
 * topic is compacted (and only compacted: time deletion would lose keys); both accept
 * records of {@code maxRecordBytes}.
 *
 * <p>Thread-safe (stateless over a thread-safe admin client).
 */
public final class TopicManager {
  private static final Logger log = LoggerFactory.getLogger(TopicManager.class);
  private static final long TIMEOUT_MS = 30_000;

  private final String bootstrap;

  /** @param bootstrap Kafka bootstrap servers */
  public TopicManager(String bootstrap) {
    this.bootstrap = bootstrap;
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
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
    try (Admin admin = Admin.create(props)) {
      Set<String> existing = admin.listTopics().names().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
      Optional<Short> rf = s.replicationFactor() < 0 ? Optional.empty() : Optional.of(s.replicationFactor());
      List<NewTopic> missing = new ArrayList<>();
      if (!existing.contains(s.eventsTopic())) {
        missing.add(new NewTopic(s.eventsTopic(), Optional.of(1), rf).configs(Map.of(
            TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
            TopicConfig.RETENTION_MS_CONFIG, Long.toString(s.eventsRetention().toMillis()),
            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(s.maxRecordBytes()))));
      }
      if (!existing.contains(s.stateTopic())) {
        missing.add(new NewTopic(s.stateTopic(), Optional.of(s.statePartitions()), rf).configs(Map.of(
            TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
            TopicConfig.SEGMENT_MS_CONFIG, Long.toString(s.stateSegment().toMillis()),
            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(s.maxRecordBytes()))));
      }
      for (NewTopic topic : missing) {
        try {
          admin.createTopics(List.of(topic)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
          log.info("created topic {} ({} partition(s), {})", topic.name(), topic.numPartitions(), topic.configs());
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
        admin.describeTopics(names).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).values()
            .forEach(d -> d.partitions().forEach(p -> ends.put(new TopicPartition(d.name(), p.partition()),
                OffsetSpec.latest())));
        admin.listOffsets(ends).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof InvalidMetadataException) || System.nanoTime() > deadline) {
          throw e;
        }
        log.debug("topics {} not served yet ({}); waiting", names, e.getCause().toString());
        Thread.sleep(50);
      }
    }
  }

  private void check(Admin admin, TopicSettings s)
      throws ExecutionException, TimeoutException, InterruptedException {
    Map<String, TopicDescription> topics = admin.describeTopics(List.of(s.eventsTopic(), s.stateTopic()))
        .allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    int eventsPartitions = topics.get(s.eventsTopic()).partitions().size();
    if (eventsPartitions != 1) {
      throw new TopicMisconfiguredException("topic " + s.eventsTopic() + " has " + eventsPartitions
          + " partitions (expected: 1, so that events keep etcd's total order); delete it or choose another --topic-prefix");
    }
    ConfigResource events = new ConfigResource(ConfigResource.Type.TOPIC, s.eventsTopic());
    ConfigResource state = new ConfigResource(ConfigResource.Type.TOPIC, s.stateTopic());
    Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(events, state))
        .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
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
    }
  }

  private static String value(Config config, String name) {
    ConfigEntry entry = config.get(name);
    return entry == null || entry.value() == null ? "" : entry.value();
  }
}
