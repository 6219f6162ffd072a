package io.watchfanout.ingester.topics;

import io.watchfanout.common.KafkaClientSettings;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The effective {@code delete.retention.ms} of the state topic (its own setting, or the broker's
 * {@code log.cleaner.delete.retention.ms}: Kafka's {@code DescribeConfigs} answers with either),
 * which {@link io.watchfanout.schema.StateScan} times a read of the whole state topic against.
 *
 * <p>Stateless: each call opens its own admin client. Thread-safe.
 */
public final class StateRetention {
    private StateRetention() {}

    /**
     * Asks Kafka for the topic's {@code delete.retention.ms} now.
     *
     * @param bootstrap Kafka bootstrap servers
     * @param settings the {@code --kafka-config} client settings
     * @param topic the state topic
     * @param clientId the admin client's id, for broker logs
     * @param timeout how long Kafka may take to answer
     * @throws IllegalStateException when Kafka does not answer in time, refuses (e.g. no
     *     {@code DescribeConfigs} permission on the topic) or answers without the setting; or when
     *     interrupted (the interrupt flag is set again)
     */
    public static Duration deleteRetention(
            String bootstrap, KafkaClientSettings settings, String topic, String clientId, Duration timeout) {
        Properties props = new Properties();
        settings.applyTo(props);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = Admin.create(props)) {
            Config config = admin.describeConfigs(List.of(resource))
                    .all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .get(resource);
            ConfigEntry entry = config == null ? null : config.get(TopicConfig.DELETE_RETENTION_MS_CONFIG);
            if (entry == null || entry.value() == null) {
                throw new IllegalStateException("Kafka did not tell delete.retention.ms of topic " + topic);
            }
            return Duration.ofMillis(Long.parseLong(entry.value()));
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read delete.retention.ms of topic " + topic + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading delete.retention.ms of topic " + topic, e);
        }
    }
}
