package io.watchfanout.ingester;

import io.etcd.jetcd.Client;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.KeyRange;
import io.watchfanout.ingester.election.LeaderElection;
import io.watchfanout.ingester.etcd.EtcdWatchFeed;
import io.watchfanout.ingester.materializer.StateMaterializer;
import io.watchfanout.ingester.ops.DependencyMonitor;
import io.watchfanout.ingester.ops.IngesterMetrics;
import io.watchfanout.ingester.ops.IngesterReadiness;
import io.watchfanout.ingester.ops.OpsServer;
import io.watchfanout.ingester.publish.PublishFailure;
import io.watchfanout.ingester.publish.PublishedLog;
import io.watchfanout.schema.WatchFanoutSerdes;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingester: one etcd watch in, revision-ordered events out to Kafka, exactly once.
 *
 * <p>A single publisher thread runs a {@link PublishSession} again whenever one ends on a
 * retriable failure: a new transactional producer (fencing any older one), the start point
 * read back from the events topic (or the state topic's checkpoint, or an initial load of etcd
 * when both are empty), then a watch from that point + 1. How a session ended is a
 * {@link PublishFailure}, and this loop acts on its kind: wait for a dependency, give way to a
 * producer that fenced this one, resign a lapsed leadership, or stop for good. The state
 * materializer (Kafka Streams) runs beside it unless disabled.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} from any thread; the rest of the
 * state belongs to the publisher thread.
 */
public final class Ingester implements IngesterRole {
    private static final Logger log = LoggerFactory.getLogger(Ingester.class);
    /** Time between two rounds of dependency probes. */
    private static final Duration PROBE_INTERVAL = Duration.ofSeconds(1);
    /**
     * gRPC keepalive of the etcd connection: a member that vanished without closing it is noticed
     * after about 15 s (time + timeout), instead of TCP's hours, and the client moves to another.
     */
    private static final Duration ETCD_KEEPALIVE_TIME = Duration.ofSeconds(10);

    private static final Duration ETCD_KEEPALIVE_TIMEOUT = Duration.ofSeconds(5);
    /**
     * First wait after a failure of the publisher's setup (topics, producer); doubles up to
     * {@code --retry-backoff-max}. Short: most failures are a broker or member restarting.
     */
    private static final Duration SETUP_BACKOFF_START = Duration.ofMillis(200);
    /**
     * How long a fenced publisher waits before it reads what the events topic ends with: time for
     * another ingester's transaction in flight to commit or abort, so that the tail is settled.
     */
    private static final Duration FENCED_CHECK_DELAY = Duration.ofSeconds(3);
    /** Bound of the one call that reads etcd's version for the log at start. */
    private static final long ETCD_VERSION_TIMEOUT_SECONDS = 10;
    /**
     * On close, how long the publisher gets to finish its transaction in flight, then how long
     * after its interruption: together the 20 s that {@link #close()} promises.
     */
    private static final long CLOSE_PUBLISH_SECONDS = 15;

    private static final long CLOSE_INTERRUPTED_SECONDS = 5;

    private final IngesterConfig config;
    private final KeyRange range;
    private final IngesterMetrics metrics;
    private final CollectorRegistry registry;
    private final String eventsTopic;
    private final String stateTopic;
    private final Client etcd;
    private final Thread publisherThread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    private final DependencyMonitor monitor;
    private final IngesterReadiness readiness;
    private final LeaderElection election;
    private final PublishSession session;
    private OpsServer ops;
    private StateMaterializer materializer;
    /** True once a thread was started to make the materializer; guarded by this. */
    private boolean materializerStarting;
    /** The publisher's watch feed once it runs; {@link #close} wakes its poll up. */
    private volatile EtcdWatchFeed feed;

    /**
     * @param config the settings
     * @param registry where the metrics are registered
     */
    public Ingester(IngesterConfig config, CollectorRegistry registry) {
        if (!config.roles().publisher()) {
            throw new IllegalArgumentException("a configuration without the publisher is a MaterializerProcess's");
        }
        this.config = config;
        this.registry = registry;
        this.range = KeyRange.prefix(config.etcd().keyPrefix());
        this.metrics = new IngesterMetrics(registry);
        this.eventsTopic = WatchFanoutSerdes.eventsTopic(config.kafka().topicPrefix());
        this.stateTopic = WatchFanoutSerdes.stateTopic(config.kafka().topicPrefix());
        this.etcd = EtcdClients.create(config.etcd(), ETCD_KEEPALIVE_TIME, ETCD_KEEPALIVE_TIMEOUT);
        this.election = config.roles().leaderElection()
                ? new LeaderElection(
                        etcd,
                        config.roles().electionName(),
                        identity(),
                        config.roles().electionLeaseTtl())
                : null;
        this.monitor = new DependencyMonitor(
                etcd,
                config.etcd().endpoints(),
                config.kafka().bootstrap(),
                config.kafka().settings(),
                eventsTopic,
                PROBE_INTERVAL,
                config.recovery().dependencyTimeout(),
                metrics,
                this::refreshGauges);
        this.readiness = new IngesterReadiness(
                monitor, config.recovery().dependencyTimeout(), config.kafka().bootstrap());
        this.session = new PublishSession(
                config, etcd, election, monitor, readiness, metrics, () -> running, this::startMaterializerAside);
        this.publisherThread = new Thread(this::runPublisher, "publisher");
    }

    /**
     * Starts the operations endpoints, unless disabled or already started: separately from
     * {@link #start()}, so that a taken port fails before anything else runs.
     *
     * @throws OpsServer.CannotListenException if the address is taken or cannot be bound
     * @throws io.watchfanout.common.tls.TlsMaterialException if the TLS files cannot be used (the
     *     message names the flag and the file)
     */
    @Override
    public synchronized void startOperationsEndpoints() {
        if (config.operations().port() >= 0 && ops == null) {
            // /readyz answers what the ready gauge says: the publisher's state, and also a lost
            // dependency or a commit that waits too long, which the publisher itself may be stuck in.
            ops = IngesterRole.openOperationsEndpoints(
                    config.operations(), registry, readiness::reason, readiness::fatal, log);
        }
    }

    /** Starts the operations endpoints (if not yet), the publisher and the materializer. */
    @Override
    public void start() {
        startOperationsEndpoints();
        log.info(
                "publishing {} of etcd {} to {} with transactional.id {}",
                range,
                config.etcd().endpoints(),
                eventsTopic,
                config.commit().transactionalId());
        monitor.start();
        publisherThread.start();
    }

    /** The bound port of the operations endpoints, or -1 when disabled. */
    public int httpPort() {
        return ops == null ? -1 : ops.port();
    }

    /**
     * Empty while publishing from a live watch with etcd and Kafka answering, else why not:
     * a fatal error, a dependency that did not answer its last probe, a Kafka commit that has
     * waited longer than {@code --dependency-timeout}, or the publisher's own state (starting,
     * standby, resynchronising, re-watching).
     */
    public String notReadyReason() {
        return readiness.reason();
    }

    /** IngesterReadiness and the gauges that depend on what the probes learnt; on the probe thread. */
    private void refreshGauges() {
        session.refreshGauges();
    }

    /** Empty unless the ingester stopped for good (fenced, misconfigured topics, ...). */
    @Override
    public String fatalReason() {
        return readiness.fatal();
    }

    /**
     * Waits until the publisher stops (after {@link #close} or a fatal error).
     *
     * @return false when the timeout passed first
     */
    @Override
    public boolean awaitStop(Duration timeout) throws InterruptedException {
        return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The publisher thread: sessions one after another, each failure acted on by its kind. */
    private void runPublisher() {
        RetryDelay retry = new RetryDelay(SETUP_BACKOFF_START, config.recovery().retryBackoffMax(), () -> running);
        try (EtcdWatchFeed feed = new EtcdWatchFeed(etcd, config.etcd().watchQueueBytes())) {
            this.feed = feed;
            if (!running) {
                return;
            }
            logEtcdVersion();
            while (running) {
                try {
                    session.run(feed, retry);
                } catch (PublishFailure.Fenced e) {
                    if (election != null) {
                        // Another replica was elected while this one still wrote: give way and campaign again.
                        log.warn("[revision {}] {}; giving up leadership", session.lastPublished(), e.getMessage());
                        election.resign();
                    } else if (anotherIngesterPublishes(e)) {
                        return;
                    }
                } catch (PublishFailure.LeadershipLost e) {
                    log.warn(
                            "[revision {}] lost the leadership of {} (lease not renewed in time); publishing stops",
                            session.lastPublished(),
                            config.roles().electionName());
                    election.resign();
                } catch (PublishFailure.DependencyDown e) {
                    if (!running) {
                        return;
                    }
                    readiness.state(e.getMessage());
                    metrics.ready.set(0);
                    metrics.watchRestarts.labels("kafka").inc();
                    log.warn(
                            "[revision {}] {}; retrying in {} ms",
                            session.lastPublished(),
                            e.getMessage(),
                            retry.millis());
                    if (!retry.await()) {
                        return;
                    }
                } catch (PublishFailure.Fatal e) {
                    fail(e.getMessage(), e.getCause());
                } catch (PublishFailure e) {
                    // Unreachable: the kinds above are all there are (sealed), but javac does not check
                    // catch clauses for exhaustiveness.
                    throw new AssertionError("no decision for " + e, e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        } finally {
            metrics.ready.set(0);
            stopped.countDown();
        }
    }

    /**
     * After a fencing error: waits a moment and reads the events topic. When it moved past
     * what this ingester published, another ingester with the same identity is active, and
     * this one stops for good; otherwise (a transaction aborted on timeout) it goes on.
     */
    private boolean anotherIngesterPublishes(PublishFailure.Fenced e) {
        long ours = session.lastPublished();
        log.warn("[revision {}] {}; checking whether another ingester publishes", ours, e.getMessage());
        if (!RetryDelay.sleep(FENCED_CHECK_DELAY, () -> running)) {
            return true;
        }
        long tail;
        try {
            tail = new PublishedLog(
                            config.kafka().bootstrap(),
                            config.kafka().settings(),
                            eventsTopic,
                            stateTopic,
                            config.commit().transactionalId())
                    .lastEventsRevision()
                    .orElse(0L);
        } catch (RuntimeException readFailure) {
            log.warn("cannot read {} ({}); retrying", eventsTopic, readFailure.toString());
            return false;
        }
        if (tail > ours) {
            fail(
                    "another ingester with transactional.id '" + config.commit().transactionalId()
                            + "' has taken over ("
                            + eventsTopic + " moved from revision " + ours + " to " + tail
                            + "); this one stops writing",
                    e);
            return true;
        }
        log.info("[revision {}] nobody else publishes to {}; resuming", ours, eventsTopic);
        return false;
    }

    private void logEtcdVersion() {
        String endpoint = config.etcd().endpoints().get(0);
        try {
            String version = etcd.getMaintenanceClient()
                    .statusMember(endpoint)
                    .get(ETCD_VERSION_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .getVersion();
            // Progress is proven by dense revisions; RequestProgress is never used, since etcd before
            // 3.4.25 / 3.5.8 may answer it ahead of undelivered events (etcd issue 15220).
            log.info(
                    "etcd {} runs version {}; progress comes from dense revisions and periodic notifications only",
                    endpoint,
                    version);
        } catch (Exception e) {
            log.warn("cannot read etcd's version from {} yet ({}); continuing", endpoint, e.toString());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Starts the materializer, once, on a thread of its own: making a Kafka Streams client takes
     * a while, and a new leader's first record must not wait for it (the materializer tails the
     * events topic from its committed offset whenever it starts).
     */
    private void startMaterializerAside() {
        synchronized (this) {
            if (!config.roles().materializer() || materializer != null || materializerStarting || !running) {
                return;
            }
            materializerStarting = true;
        }
        Thread starter = new Thread(
                () -> {
                    try {
                        startMaterializerOnce();
                    } catch (RuntimeException e) {
                        fail("state materializer cannot start: " + e, e);
                    }
                },
                "materializer-start");
        starter.setDaemon(true);
        starter.start();
    }

    private synchronized void startMaterializerOnce() {
        if (config.roles().materializer() && materializer == null && running) {
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
        if (readiness.fail(reason)) {
            log.error("{}; the ingester stops", reason, cause);
        }
        running = false;
        metrics.ready.set(0);
    }

    /** This process's name in elections and logs: host name and pid. */
    private static String identity() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown-host";
        }
        return host + "/" + ProcessHandle.current().pid();
    }

    /**
     * Stops publishing after the transaction in flight (committed or aborted), closes the
     * watch, the materializer and the endpoints. Waits up to 20 s.
     */
    @Override
    public void close() {
        long start = System.nanoTime();
        running = false;
        EtcdWatchFeed f = feed;
        if (f != null) {
            // The publisher sees the stop at once, between two transactions, not after its poll.
            f.wakeUp();
        }
        if (election != null && !election.isLeader()) {
            publisherThread.interrupt(); // a standby waits in its campaign: nothing to finish
        }
        try {
            if (publisherThread.isAlive() && !stopped.await(CLOSE_PUBLISH_SECONDS, TimeUnit.SECONDS)) {
                publisherThread.interrupt();
                stopped.await(CLOSE_INTERRUPTED_SECONDS, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long publisherStopped = System.nanoTime();
        if (election != null) {
            election.resign();
        }
        long resigned = System.nanoTime();
        synchronized (this) {
            if (materializer != null) {
                materializer.close();
            }
        }
        long materializerClosed = System.nanoTime();
        monitor.close();
        etcd.close();
        if (ops != null) {
            ops.close();
        }
        long end = System.nanoTime();
        log.info(
                "[revision {}] stopped in {} ms (publisher {} ms, resignation {} ms, materializer {} ms, clients {} ms)",
                session.lastPublished(),
                millis(end - start),
                millis(publisherStopped - start),
                millis(resigned - publisherStopped),
                millis(materializerClosed - resigned),
                millis(end - materializerClosed));
    }

    private static long millis(long nanos) {
        return nanos / 1_000_000;
    }
}
