package io.watchfanout.ingester;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Gauge;
import io.watchfanout.ingester.materializer.StateMaterializer;
import io.watchfanout.ingester.ops.OpsServer;
import io.watchfanout.ingester.topics.TopicManager;
import io.watchfanout.ingester.topics.TopicMisconfiguredException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state materializer as a process of its own ({@code --no-publisher}), the production layout:
 * the materializer reads every event back from Kafka and writes each key's latest value, about
 * as much work as publishing it, and in a process of its own it no longer competes with the
 * publisher for its cores, its heap and its garbage collections. It needs Kafka only: it creates
 * or checks the topics with the same settings as the publisher (so either may start first), then
 * runs {@link StateMaterializer} until closed or until the materializer fails.
 *
 * <p>{@code /readyz} is 200 while Kafka Streams is {@code RUNNING}; {@code /livez} fails once it
 * stopped for good (an undecodable events record, misconfigured topics), and the process then
 * exits with status 1. Metrics: {@code watchfanout_materializer_ready} and
 * {@code watchfanout_materializer_lag_records} (the events not yet projected, from the Streams
 * consumer's {@code records-lag-max}).
 *
 * <p>Thread-safety: {@link #start} and {@link #close} from any thread; a starter thread waits for
 * Kafka and starts the materializer.
 */
public final class MaterializerProcess implements IngesterRole {
    private static final Logger log = LoggerFactory.getLogger(MaterializerProcess.class);
    /** First wait after Kafka refused or did not answer the topics' set-up; doubles up to {@code --retry-backoff-max}. */
    private static final Duration SETUP_BACKOFF_START = Duration.ofMillis(200);
    /** The empty reason, compared by reference: no fatal error yet. */
    private static final String NONE = "";

    private final IngesterConfig config;
    private final CollectorRegistry registry;
    private final Thread starter;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final AtomicReference<String> fatal = new AtomicReference<>(NONE);
    private volatile boolean running = true;
    private volatile String state = "starting";
    /** Set once by the starter thread, under this object's lock (so that {@link #close} sees it or prevents it). */
    private volatile StateMaterializer materializer;

    private OpsServer ops;

    /**
     * @param config the settings ({@code runPublisher} false; etcd is not used)
     * @param registry where the metrics are registered
     */
    public MaterializerProcess(IngesterConfig config, CollectorRegistry registry) {
        this.config = config;
        this.registry = registry;
        this.starter = new Thread(this::run, "materializer-start");
        Gauge.build("watchfanout_materializer_ready", "1 while the state materializer runs (Kafka Streams RUNNING).")
                .create()
                .setChild(new Gauge.Child() {
                    @Override
                    public double get() {
                        return notReadyReason().isEmpty() ? 1 : 0;
                    }
                })
                .register(registry);
        Gauge.build(
                        "watchfanout_materializer_lag_records",
                        "Events records the state materializer has not yet projected (its consumer's records-lag-max; "
                                + "NaN before its first fetch).")
                .create()
                .setChild(new Gauge.Child() {
                    @Override
                    public double get() {
                        StateMaterializer m = current();
                        return m == null ? Double.NaN : m.lagRecords();
                    }
                })
                .register(registry);
    }

    @Override
    public synchronized void startOperationsEndpoints() {
        if (config.operations().port() >= 0 && ops == null) {
            ops = IngesterRole.openOperationsEndpoints(
                    config.operations(), registry, this::notReadyReason, fatal::get, log);
        }
    }

    @Override
    public void start() {
        startOperationsEndpoints();
        log.info(
                "materializing {} into {} (no publisher in this process)",
                config.topicSettings().eventsTopic(),
                config.topicSettings().stateTopic());
        starter.start();
    }

    /** The bound port of the operations endpoints, or -1 when disabled. */
    public int httpPort() {
        return ops == null ? -1 : ops.port();
    }

    /** Empty while the materializer runs, else why not. */
    public String notReadyReason() {
        String stopped = fatal.get();
        if (!stopped.isEmpty()) {
            return stopped;
        }
        StateMaterializer m = current();
        if (m == null) {
            return state;
        }
        KafkaStreams.State s = m.state();
        return s == KafkaStreams.State.RUNNING ? "" : "state materializer " + s;
    }

    @Override
    public String fatalReason() {
        return fatal.get();
    }

    @Override
    public boolean awaitStop(Duration timeout) throws InterruptedException {
        return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private StateMaterializer current() {
        return materializer;
    }

    /** The starter thread: the topics (retried while Kafka is away), then the materializer. */
    private void run() {
        RetryDelay retry = new RetryDelay(SETUP_BACKOFF_START, config.recovery().retryBackoffMax(), () -> running);
        while (running) {
            try {
                new TopicManager(config.kafka().bootstrap(), config.kafka().settings()).ensure(config.topicSettings());
                break;
            } catch (TopicMisconfiguredException e) {
                fail(e.getMessage(), e);
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                state = "waiting for Kafka at " + config.kafka().bootstrap() + ": " + e;
                log.warn("cannot set up the topics yet ({}); retrying in {} ms", e.toString(), retry.millis());
                if (!retry.await()) {
                    return;
                }
            }
        }
        synchronized (this) {
            if (!running) {
                return;
            }
            materializer = new StateMaterializer(
                    config.kafka().bootstrap(),
                    config.kafka().settings(),
                    config.kafka().topicPrefix(),
                    config.kafka().maxRecordBytes(),
                    config.kafka().compression(),
                    e -> fail("state materializer failed: " + e, e));
            materializer.start();
        }
    }

    private void fail(String reason, Throwable cause) {
        if (fatal.compareAndSet(NONE, reason)) {
            log.error("{}; the materializer stops", reason, cause);
        }
        running = false;
        stopped.countDown();
    }

    /** Stops the materializer (committing what it projected) and the endpoints; waits up to 20 s. */
    @Override
    public void close() {
        running = false;
        starter.interrupt();
        try {
            starter.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (materializer != null) {
                materializer.close();
            }
        }
        if (ops != null) {
            ops.close();
        }
        stopped.countDown();
    }
}
