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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
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
 * {@link KubeTopicsMetrics} (with the newest revision at the events topic's end, read every 2 s by
 * {@link EventsTopicHead}). A failed stream thread is replaced: its task resumes from the last
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
    /** How often the events topic's end is read for {@code watchfanout_kube_lag_revisions}. */
    private static final Duration HEAD_INTERVAL = Duration.ofSeconds(2);

    private final Admin admin;
    private final KafkaStreams streams;
    private final KubeTopicsMetrics metrics = new KubeTopicsMetrics();
    private final EventsTopicHead head;
    private final ScheduledExecutorService headReader = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "events-topic-head");
        t.setDaemon(true);
        return t;
    });

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
        head = new EventsTopicHead(headConsumer(bootstrap, clientSettings, topicPrefix), eventsTopic);
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

    /** A group-less read_committed consumer: the ingester's open or aborted transactions do not count. */
    private static KafkaConsumer<byte[], byte[]> headConsumer(
            String bootstrap, KafkaClientSettings clientSettings, String topicPrefix) {
        Properties props = new Properties();
        clientSettings.applyTo(props);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, topicPrefix + ".kube-topics.head");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        // The ingester creates the events topic with its own settings; asking for it must not create it.
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, EventsTopicHead.TAIL_RECORDS);
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private void readHead() {
        try {
            metrics.newestInTopic(head.read(HEAD_INTERVAL));
        } catch (InterruptException e) {
            Thread.currentThread().interrupt();
        } catch (KafkaException e) {
            // Kafka away: the lag keeps its last value; Streams' own state tells that Kafka is down.
            LOG.debug("cannot read the end of the events topic: {}", e.toString());
        }
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** Starts the stream threads, and the reading of the events topic's end every 2 s (for the lag in revisions). */
    public void start() {
        streams.start();
        headReader.scheduleWithFixedDelay(this::readHead, 0, HEAD_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
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

    /**
     * Commits what was processed and stops (bounded), then closes the admin client and the reader
     * of the topic's end. Idempotent.
     */
    @Override
    public void close() {
        if (!streams.close(CLOSE_TIMEOUT)) {
            LOG.warn("Kafka Streams did not stop within {}", CLOSE_TIMEOUT);
        }
        admin.close(Duration.ofSeconds(5));
        headReader.shutdownNow();
        try {
            if (headReader.awaitTermination(10, TimeUnit.SECONDS)) {
                head.close();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
