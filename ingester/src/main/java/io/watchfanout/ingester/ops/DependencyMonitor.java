package io.watchfanout.ingester.ops;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.common.KafkaClientSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes etcd and Kafka once per interval, on its own daemon thread, so that the ingester
 * knows within seconds that it cannot reach one of them, rather than when a producer or a
 * watch times out (up to half a minute later).
 *
 * <p>etcd: a linearizable count-only range of one key; its header revision is etcd's
 * current revision, which makes the lag metric true even when the watch is stuck. Kafka: a
 * metadata request for the events topic, which must have a leader. Each probe is bounded by
 * the timeout; a dependency is down from its first failed probe until its next good one.
 * One log line when a dependency is lost, one when it is back (with how long it was gone).
 *
 * <p>Thread-safety: every accessor may be called from any thread.
 */
public final class DependencyMonitor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DependencyMonitor.class);
    private static final ByteSequence PROBE_KEY = ByteSequence.from(new byte[] {0});

    private final Client etcd;
    private final String etcdName;
    private final Admin kafka;
    private final String kafkaName;
    private final String eventsTopic;
    private final Duration interval;
    private final Duration timeout;
    private final IngesterMetrics metrics;
    private final Thread thread;
    private final Dependency etcdState = new Dependency();
    private final Dependency kafkaState = new Dependency();
    private final Runnable afterEachRound;
    private final AtomicLong etcdRevision = new AtomicLong(-1);
    private volatile boolean running = true;

    /**
     * @param etcd the ingester's etcd client
     * @param etcdEndpoints for log lines and reasons
     * @param kafkaBootstrap Kafka's bootstrap servers
     * @param kafkaSettings the {@code --kafka-config} client settings
     * @param eventsTopic the topic whose leader must be known
     * @param interval time between two rounds of probes, &gt; 0
     * @param timeout bound of one probe, &gt; 0
     * @param metrics where {@code watchfanout_ingester_dependency_up} goes
     * @param afterEachRound run on the probe thread after every round (gauges that depend on
     *     what the probes learnt)
     */
    public DependencyMonitor(
            Client etcd,
            List<String> etcdEndpoints,
            String kafkaBootstrap,
            KafkaClientSettings kafkaSettings,
            String eventsTopic,
            Duration interval,
            Duration timeout,
            IngesterMetrics metrics,
            Runnable afterEachRound) {
        this.afterEachRound = afterEachRound;
        this.etcd = etcd;
        this.etcdName = "etcd at " + String.join(",", etcdEndpoints);
        this.kafkaName = "Kafka at " + kafkaBootstrap;
        this.eventsTopic = eventsTopic;
        this.interval = interval;
        this.timeout = timeout;
        this.metrics = metrics;
        Properties props = new Properties();
        kafkaSettings.applyTo(props);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafkaBootstrap);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "watchfanout-ingester-probe");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
        this.kafka = Admin.create(props);
        this.thread = new Thread(this::run, "dependency-probe");
        this.thread.setDaemon(true);
    }

    /** Starts probing. */
    public void start() {
        thread.start();
    }

    /**
     * Empty while both dependencies answered their last probe (or none has been probed
     * yet), else why not: which one, since when, and the last error.
     */
    public String problem() {
        String etcdProblem = etcdState.problem(etcdName);
        return !etcdProblem.isEmpty() ? etcdProblem : kafkaState.problem(kafkaName);
    }

    /** True when etcd answered its last probe. */
    public boolean etcdUp() {
        return etcdState.up;
    }

    /** True when Kafka answered its last probe. */
    public boolean kafkaUp() {
        return kafkaState.up;
    }

    /** etcd's revision at the last good probe, or -1 when etcd is down or not probed yet. */
    public long etcdRevision() {
        return etcdState.up ? etcdRevision.get() : -1;
    }

    /** Raises the known etcd revision to one seen in a watch response header. */
    public void observeEtcdRevision(long revision) {
        etcdRevision.accumulateAndGet(revision, Math::max);
    }

    private void run() {
        while (running) {
            long started = System.nanoTime();
            probeEtcd();
            probeKafka();
            metrics.dependencyUp.labels("etcd").set(etcdState.up ? 1 : 0);
            metrics.dependencyUp.labels("kafka").set(kafkaState.up ? 1 : 0);
            afterEachRound.run();
            long left = interval.toNanos() - (System.nanoTime() - started);
            if (left > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(left);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void probeEtcd() {
        try {
            long revision = etcd.getKVClient()
                    .get(PROBE_KEY, GetOption.builder().withCountOnly(true).build())
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .getHeader()
                    .getRevision();
            observeEtcdRevision(revision);
            etcdState.succeeded(etcdName);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            etcdState.failed(etcdName, e);
        }
    }

    private void probeKafka() {
        try {
            Map<String, TopicDescription> topics = kafka.describeTopics(
                            List.of(eventsTopic), new DescribeTopicsOptions().timeoutMs((int) timeout.toMillis()))
                    .allTopicNames()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            for (TopicPartitionInfo p : topics.get(eventsTopic).partitions()) {
                if (p.leader() == null || p.leader().isEmpty()) {
                    throw new IllegalStateException(
                            "partition " + p.partition() + " of " + eventsTopic + " has no leader");
                }
            }
            kafkaState.succeeded(kafkaName);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // A topic that does not exist yet is the ingester's to create, not an outage.
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                kafkaState.succeeded(kafkaName);
            } else {
                kafkaState.failed(kafkaName, e);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kafka.close(Duration.ofSeconds(1));
    }

    /** The up/down state of one dependency; written by the probe thread only. */
    private static final class Dependency {
        volatile boolean up = true;
        volatile long downSinceNanos;
        volatile String lastError = "";

        void succeeded(String name) {
            if (!up) {
                up = true;
                log.info(
                        "{} is back after {} s",
                        name,
                        String.format("%.1f", (System.nanoTime() - downSinceNanos) / 1e9));
            }
        }

        void failed(String name, Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            lastError = cause instanceof TimeoutException ? "no answer in time" : cause.toString();
            if (up) {
                downSinceNanos = System.nanoTime();
                up = false;
                log.warn("lost {}: {}", name, lastError);
            }
        }

        String problem(String name) {
            if (up) {
                return "";
            }
            return "cannot reach " + name + " for " + String.format("%.0f", (System.nanoTime() - downSinceNanos) / 1e9)
                    + " s (" + lastError + ")";
        }
    }
}
