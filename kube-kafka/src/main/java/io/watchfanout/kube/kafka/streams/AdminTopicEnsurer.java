package io.watchfanout.kube.kafka.streams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link TopicEnsurer} over Kafka's admin client: creates missing topics with the configured
 * partitions and replication factor (compacted ones with {@code cleanup.policy=compact}), takes a
 * topic that exists already as it is, and remembers the topics it saw exist. Synchronous: a stream
 * thread waits for the creation (bounded by {@code timeout}, well under the consumer's poll
 * interval) before it forwards the first record to the topic.
 *
 * <p>Thread-safe. The admin client belongs to the caller.
 */
public final class AdminTopicEnsurer implements TopicEnsurer {
    private static final Logger LOG = LoggerFactory.getLogger(AdminTopicEnsurer.class);

    private final Admin admin;
    private final int partitions;
    private final short replicationFactor;
    private final Duration timeout;
    private final Set<String> known = ConcurrentHashMap.newKeySet();

    /**
     * @param admin the admin client, open for this ensurer's life
     * @param partitions partitions of a new topic, {@code >= 1}
     * @param replicationFactor replicas of a new topic, {@code >= 1}
     * @param timeout how long one creation may take
     */
    public AdminTopicEnsurer(Admin admin, int partitions, short replicationFactor, Duration timeout) {
        if (partitions < 1 || replicationFactor < 1) {
            throw new IllegalArgumentException("partitions " + partitions + ", replication factor " + replicationFactor
                    + " (expected: both >= 1)");
        }
        this.admin = admin;
        this.partitions = partitions;
        this.replicationFactor = replicationFactor;
        this.timeout = timeout;
    }

    @Override
    public void ensure(Collection<String> topics, Retention retention) {
        List<NewTopic> missing = new ArrayList<>();
        for (String t : topics) {
            if (!known.contains(t)) {
                NewTopic topic = new NewTopic(t, Optional.of(partitions), Optional.of(replicationFactor));
                if (retention == Retention.COMPACT) {
                    topic.configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
                }
                missing.add(topic);
            }
        }
        if (missing.isEmpty()) {
            return;
        }
        CreateTopicsResult result = admin.createTopics(missing);
        for (NewTopic t : missing) {
            try {
                result.values().get(t.name()).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                LOG.info("created topic {} ({} partitions, {})", t.name(), partitions, retention);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new KafkaException("cannot create topic " + t.name() + ": " + e.getCause(), e.getCause());
                }
            } catch (TimeoutException e) {
                throw new KafkaException("topic " + t.name() + " not created within " + timeout, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KafkaException("interrupted while creating topic " + t.name(), e);
            }
            known.add(t.name());
        }
    }
}
