package io.watchfanout.kube.kafka.streams;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.kube.kafka.KubeEventDecoder;
import io.watchfanout.schema.WatchFanoutSerdes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kubernetes topics application: {@link KubeTopicsTopology} run by Kafka Streams with
 * exactly-once v2 (application id {@code <prefix>.kube-topics}; more instances share the events
 * topic's partitions), an admin client creating the output topics ({@link AdminTopicEnsurer}), and
 * {@link KubeTopicsMetrics}. A failed stream thread is replaced: its task resumes from the last
 * commit, its open transaction aborted.
 *
 * <p>Thread-safe: {@link #close} may be called from a shutdown hook.
 */
public final class KubeTopicsApp implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KubeTopicsApp.class);
    /** How long a stop may take to commit what was processed. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);
    /** How long a topic creation may take; well under the consumer's poll interval. */
    private static final Duration CREATE_TIMEOUT = Duration.ofSeconds(30);

    private final Admin admin;
    private final KafkaStreams streams;
    private final KubeTopicsMetrics metrics = new KubeTopicsMetrics();

    /**
     * @param bootstrap Kafka bootstrap servers
     * @param clientSettings the {@code --kafka-config} settings of every Kafka client ({@link KafkaClientSettings#NONE}: none)
     * @param topicPrefix the deployment's topic prefix: reads {@code <prefix>.events}
     * @param etcdPrefix kube-apiserver's {@code --etcd-prefix}
     * @param partitions partitions of each topic created, {@code >= 1}
     * @param replicationFactor replicas of each topic created, {@code >= 1}
     * @param secrets whether Secrets' values are published or redacted
     * @param filter the resources that get topics
     * @param stateDir Kafka Streams' state directory (the CRDs' store), null for a new temporary one
     */
    public KubeTopicsApp(
            String bootstrap,
            KafkaClientSettings clientSettings,
            String topicPrefix,
            String etcdPrefix,
            int partitions,
            short replicationFactor,
            KubeEventDecoder.SecretPolicy secrets,
            ResourceFilter filter,
            Path stateDir) {
        Properties props = new Properties();
        clientSettings.applyTo(props);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, topicPrefix + ".kube-topics");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) replicationFactor);
        try {
            props.put(
                    StreamsConfig.STATE_DIR_CONFIG,
                    (stateDir != null ? stateDir : Files.createTempDirectory("watchfanout-kube-topics")).toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the Kafka Streams state directory", e);
        }
        Properties adminProps = new Properties();
        clientSettings.applyTo(adminProps);
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(adminProps);
        TopicEnsurer topics = new AdminTopicEnsurer(admin, partitions, replicationFactor, CREATE_TIMEOUT);
        streams = new KafkaStreams(
                KubeTopicsTopology.build(
                        topicPrefix, etcdPrefix, secrets, filter, "//watch-fanout/" + topicPrefix, topics, metrics),
                props);
        String eventsTopic = WatchFanoutSerdes.eventsTopic(topicPrefix);
        streams.setUncaughtExceptionHandler(e -> {
            if (causedBy(e, MissingSourceTopicException.class)) {
                // A replaced thread would fail the same way at once, in a loop: stop, not ready, and say why.
                LOG.error(
                        "{} does not exist: is the ingester running with --topic-prefix {}? Stopping (not ready)",
                        eventsTopic,
                        topicPrefix);
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            }
            LOG.warn("a stream thread failed; replacing it (resumes from the last commit): {}", e.toString(), e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** Starts the stream threads. */
    public void start() {
        streams.start();
    }

    /** True while Kafka Streams runs with its tasks assigned ({@code RUNNING}), for {@code /readyz}. */
    public boolean ready() {
        return streams.state() == KafkaStreams.State.RUNNING;
    }

    /** Kafka Streams' state, for logs and probes. */
    public KafkaStreams.State state() {
        return streams.state();
    }

    /** The counters of this application. */
    public KubeTopicsMetrics metrics() {
        return metrics;
    }

    /** Commits what was processed and stops (bounded), then closes the admin client. Idempotent. */
    @Override
    public void close() {
        if (!streams.close(CLOSE_TIMEOUT)) {
            LOG.warn("Kafka Streams did not stop within {}", CLOSE_TIMEOUT);
        }
        admin.close(Duration.ofSeconds(5));
    }
}
