package io.watchfanout.fanout.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * Asks Kafka for the state topic's effective {@code delete.retention.ms} (its own setting, or the
 * broker's {@code log.cleaner.delete.retention.ms} when it has none: {@code DescribeConfigs}
 * answers with either), which {@link io.watchfanout.schema.StateScan} times a rebuild's read
 * against. Asked anew before and after every read of the state topic, so that a changed setting
 * is heeded.
 *
 * <p>Holds one admin client until {@link #close()}. Not thread-safe: the feed thread.
 */
final class DeleteRetentionLookup implements AutoCloseable {
    private final Admin admin;
    private final ConfigResource topic;
    private final Duration timeout;

    /**
     * @param props the node's Kafka client settings and bootstrap servers (consumer keys in it are
     *     ignored by the admin client)
     * @param topic the state topic
     * @param timeout how long one question may take
     */
    DeleteRetentionLookup(Properties props, String topic, Duration timeout) {
        Properties p = new Properties();
        p.putAll(props);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        this.admin = Admin.create(p);
        this.topic = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        this.timeout = timeout;
    }

    /**
     * The topic's {@code delete.retention.ms} now.
     *
     * @throws TimeoutException when Kafka does not answer in time or answers with a retriable
     *     error: ask again later
     * @throws KafkaException when Kafka refuses for good (e.g. the node may not
     *     {@code DescribeConfigs} the topic), with a message saying what was asked
     */
    Duration get() {
        try {
            Config config = admin.describeConfigs(List.of(topic))
                    .all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .get(topic);
            ConfigEntry entry = config == null ? null : config.get(TopicConfig.DELETE_RETENTION_MS_CONFIG);
            if (entry == null || entry.value() == null) {
                throw new KafkaException(
                        "Kafka did not tell " + TopicConfig.DELETE_RETENTION_MS_CONFIG + " of topic " + topic.name());
            }
            return Duration.ofMillis(Long.parseLong(entry.value()));
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TimeoutException(
                    "no answer to DescribeConfigs of " + topic.name() + " in " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RetriableException) {
                throw new TimeoutException("DescribeConfigs of " + topic.name() + ": " + cause.getMessage());
            }
            throw new KafkaException(
                    "cannot read " + TopicConfig.DELETE_RETENTION_MS_CONFIG + " of topic " + topic.name()
                            + " (the node needs DescribeConfigs on it): " + cause,
                    cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new org.apache.kafka.common.errors.InterruptException(e);
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
