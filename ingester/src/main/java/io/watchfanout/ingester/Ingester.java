package io.watchfanout.ingester;

import io.etcd.jetcd.Client;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.KeyBytes;
import io.watchfanout.ingester.etcd.EtcdSnapshot;
import io.watchfanout.ingester.etcd.EtcdSnapshotReader;
import io.watchfanout.ingester.etcd.EtcdWatchFeed;
import io.watchfanout.ingester.etcd.KeyRange;
import io.watchfanout.ingester.etcd.WatchSignal;
import io.watchfanout.ingester.election.LeaderElection;
import io.watchfanout.ingester.materializer.StateMaterializer;
import io.watchfanout.ingester.ops.DependencyMonitor;
import io.watchfanout.ingester.ops.IngesterMetrics;
import io.watchfanout.ingester.ops.OpsServer;
import io.watchfanout.ingester.publish.DenseRevisionException;
import io.watchfanout.ingester.publish.EventsPublisher;
import io.watchfanout.ingester.publish.IngesterFencedException;
import io.watchfanout.ingester.publish.KeyedRecord;
import io.watchfanout.ingester.publish.PublishedLog;
import io.watchfanout.ingester.publish.Resynchronizer;
import io.watchfanout.ingester.publish.SkippedRevision;
import io.watchfanout.ingester.publish.RevisionAssembler;
import io.watchfanout.ingester.topics.TopicManager;
import io.watchfanout.ingester.topics.TopicMisconfiguredException;
import io.watchfanout.ingester.topics.TopicSettings;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Resync;
import io.watchfanout.schema.v1.StateCheckpoint;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingester: one etcd watch in, revision-ordered events out to Kafka, exactly once.
 *
 * <p>A single publisher thread owns the resume point. It (re)starts a session whenever
 * Kafka or etcd fails: a new transactional producer (fencing any older one), the start
 * point read back from the events topic (or the state topic's checkpoint, or an initial
 * load of etcd when both are empty), then a watch from that point + 1. Responses pass
 * through a {@link RevisionAssembler} (dense-revision check, prefix filter, numbering,
 * chaining) and are committed in Kafka transactions that never split a revision. The
 * state materializer (Kafka Streams) runs beside it unless disabled.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} from any thread; the rest of the
 * state belongs to the publisher thread.
 */
public final class Ingester implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Ingester.class);
  private static final Duration POLL = Duration.ofMillis(500);
  /** Time between two rounds of dependency probes. */
  private static final Duration PROBE_INTERVAL = Duration.ofSeconds(1);
  /** Bound of one range request of a resync or a rebuild. */
  private static final Duration SNAPSHOT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
  /** More skipped revisions than this are resynchronised rather than read one by one. */
  private static final long MAX_REBUILT_REVISIONS = 64;
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
  /** First wait after a failed watch or publish of the running publisher; doubles up to {@code --retry-backoff-max}. */
  private static final Duration WATCH_BACKOFF_START = Duration.ofMillis(100);
  /**
   * How long the state topic's active segment may stay open before it rolls: the active segment
   * is never compacted, so this bounds how long superseded state records stay readable.
   */
  private static final Duration STATE_SEGMENT = Duration.ofHours(1);
  /**
   * How long a fenced publisher waits before it reads what the events topic ends with: time for
   * another ingester's transaction in flight to commit or abort, so that the tail is settled.
   */
  private static final Duration FENCED_CHECK_DELAY = Duration.ofSeconds(3);
  /** Bound of the one call that reads etcd's version for the log at start. */
  private static final long ETCD_VERSION_TIMEOUT_SECONDS = 10;
  /**
   * Upper bound of how long a producer may block in {@code initTransactions()} under an
   * election lease, even when the lease has longer left: a stuck broker is retried sooner.
   */
  private static final long MAX_FENCED_BLOCK_MILLIS = 10_000;
  /** What a record needs beyond its key and value (headers, batch framing), kept free of --max-record-bytes. */
  private static final int RECORD_OVERHEAD_BYTES = 256;
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
  private volatile String notReady = "starting";
  /** The resume point: every revision up to this one is in the events topic. */
  private volatile long lastPublished;
  /** When the publish in flight started (System.nanoTime()), 0 when none is. */
  private volatile long publishStartedNanos;
  /** When the last record was published (System.nanoTime()); publisher thread only. */
  private long lastPublishNanos = System.nanoTime();
  private final DependencyMonitor monitor;
  private volatile String fatal = "";
  private final LeaderElection election;
  private OpsServer ops;
  private StateMaterializer materializer;

  /**
   * @param config the settings
   * @param registry where the metrics are registered
   */
  public Ingester(IngesterConfig config, CollectorRegistry registry) {
    this.config = config;
    this.registry = registry;
    this.range = new KeyRange(config.keyPrefix());
    this.metrics = new IngesterMetrics(registry);
    this.eventsTopic = WatchFanoutSerdes.eventsTopic(config.topicPrefix());
    this.stateTopic = WatchFanoutSerdes.stateTopic(config.topicPrefix());
    this.etcd = Client.builder()
        .endpoints(config.etcdEndpoints().toArray(String[]::new))
        .maxInboundMessageSize(config.etcdMaxInboundBytes())
        .keepaliveTime(ETCD_KEEPALIVE_TIME)
        .keepaliveTimeout(ETCD_KEEPALIVE_TIMEOUT)
        .build();
    this.election = config.leaderElection()
        ? new LeaderElection(etcd, config.electionName(), identity(), config.electionLeaseTtl()) : null;
    this.monitor = new DependencyMonitor(etcd, config.etcdEndpoints(), config.kafkaBootstrap(), eventsTopic,
        PROBE_INTERVAL, config.dependencyTimeout(), metrics, this::refreshGauges);
    this.publisherThread = new Thread(this::runPublisher, "publisher");
  }

  /**
   * Starts the operations endpoints, unless disabled or already started: separately from
   * {@link #start()}, so that a taken port fails before anything else runs.
   *
   * @throws OpsServer.CannotListenException if the address is taken or cannot be bound
   */
  public synchronized void startOperationsEndpoints() {
    if (config.httpPort() >= 0 && ops == null) {
      ops = new OpsServer(config.httpHost(), config.httpPort(), registry, () -> fatal.isEmpty() ? notReady : fatal,
          () -> fatal);
      log.info("operations endpoints on http://{}:{} (/metrics, /readyz, /livez)", config.httpHost(), ops.port());
    }
  }

  /** Starts the operations endpoints (if not yet), the publisher and the materializer. */
  public void start() {
    startOperationsEndpoints();
    log.info("publishing {} of etcd {} to {} with transactional.id {}", range, config.etcdEndpoints(),
        eventsTopic, config.transactionalId());
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
    if (!fatal.isEmpty()) {
      return fatal;
    }
    String dependency = monitor.problem();
    if (!dependency.isEmpty()) {
      return dependency;
    }
    long publishing = publishStartedNanos;
    if (publishing != 0 && System.nanoTime() - publishing > config.dependencyTimeout().toNanos()) {
      return "a Kafka transaction has waited " + (System.nanoTime() - publishing) / 1_000_000_000L
          + " s for its commit (Kafka at " + config.kafkaBootstrap() + ")";
    }
    return notReady;
  }

  /** Readiness and the gauges that depend on what the probes learnt; on the probe thread. */
  private void refreshGauges() {
    metrics.ready.set(notReadyReason().isEmpty() ? 1 : 0);
    long etcdRevision = monitor.etcdRevision();
    boolean leading = election == null || election.isLeader();
    // Unknown is NaN, not 0: a lag of 0 would claim the tier is current.
    metrics.etcdRevision.set(etcdRevision < 0 ? Double.NaN : etcdRevision);
    metrics.watchLagRevisions.set(etcdRevision < 0 || !leading ? Double.NaN
        : Math.max(0, etcdRevision - lastPublished));
  }

  /** Empty unless the ingester stopped for good (fenced, misconfigured topics, ...). */
  public String fatalReason() {
    return fatal;
  }

  /**
   * Waits until the publisher stops (after {@link #close} or a fatal error).
   *
   * @return false when the timeout passed first
   */
  public boolean awaitStop(Duration timeout) throws InterruptedException {
    return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void runPublisher() {
    Duration backoff = SETUP_BACKOFF_START;
    try (EtcdWatchFeed feed = new EtcdWatchFeed(etcd, config.watchQueueBytes())) {
      logEtcdVersion();
      while (running) {
        try {
          if (election != null && !election.isLeader()) {
            notReady = "standby: another replica leads " + config.electionName();
            metrics.ready.set(0);
            election.awaitLeadership();
          }
          new TopicManager(config.kafkaBootstrap()).ensure(new TopicSettings(eventsTopic, stateTopic,
              config.eventsRetention(), STATE_SEGMENT, config.maxRecordBytes(), config.statePartitions(),
              config.replicationFactor(), config.minInsyncReplicas()));
          startMaterializerOnce();
          try (EventsPublisher publisher = new EventsPublisher(config.kafkaBootstrap(), eventsTopic,
              config.transactionalId(), config.maxRecordBytes(), config.transactionTimeout(), fencingBound())) {
            long lastPublished = startPoint(publisher);
            backoff = SETUP_BACKOFF_START;
            stream(feed, publisher, lastPublished);
          }
        } catch (IngesterFencedException e) {
          if (election != null) {
            // Another replica was elected while this one still wrote: give way and campaign again.
            log.warn("[revision {}] {}; giving up leadership", lastPublished, e.getMessage());
            election.resign();
          } else if (anotherIngesterPublishes(e)) {
            return;
          }
        } catch (LeadershipLostException e) {
          log.warn("[revision {}] lost the leadership of {} (lease not renewed in time); publishing stops",
              lastPublished, config.electionName());
          election.resign();
        } catch (TopicMisconfiguredException e) {
          fail("refusing to start: " + e.getMessage(), e);
        } catch (RecordTooLargeException e) {
          fail("an etcd event does not fit a Kafka record: " + e.getMessage(), e);
        } catch (org.apache.kafka.common.errors.RecordDeserializationException e) {
          // Fail closed: without the records it has published the ingester cannot tell where to resume.
          fail("cannot decode the record at offset " + e.offset() + " of " + e.topicPartition()
              + " while reading back what was published (" + (e.getCause() != null ? e.getCause().getMessage()
              : e.getMessage()) + ")", e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (Exception e) {
          if (!running) {
            return;
          }
          notReady = "waiting for " + dependencyOf(e) + ": " + e;
          metrics.ready.set(0);
          metrics.watchRestarts.labels("kafka").inc();
          log.warn("[revision {}] {}; retrying in {} ms", lastPublished, notReady,
              backoff.toMillis());
          if (!sleep(backoff)) {
            return;
          }
          backoff = min(backoff.multipliedBy(2), config.retryBackoffMax());
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
  private boolean anotherIngesterPublishes(IngesterFencedException e) {
    long ours = lastPublished;
    log.warn("[revision {}] {}; checking whether another ingester publishes", ours, e.getMessage());
    if (!sleep(FENCED_CHECK_DELAY)) {
      return true;
    }
    long tail;
    try {
      tail = new PublishedLog(config.kafkaBootstrap(), eventsTopic, stateTopic, config.transactionalId())
          .lastEventsRevision().orElse(0L);
    } catch (RuntimeException readFailure) {
      log.warn("cannot read {} ({}); retrying", eventsTopic, readFailure.toString());
      return false;
    }
    if (tail > ours) {
      fail("another ingester with transactional.id '" + config.transactionalId() + "' has taken over ("
          + eventsTopic + " moved from revision " + ours + " to " + tail + "); this one stops writing", e);
      return true;
    }
    log.info("[revision {}] nobody else publishes to {}; resuming", ours, eventsTopic);
    return false;
  }

  private void logEtcdVersion() {
    String endpoint = config.etcdEndpoints().get(0);
    try {
      String version = etcd.getMaintenanceClient().statusMember(endpoint).get(ETCD_VERSION_TIMEOUT_SECONDS, TimeUnit.SECONDS).getVersion();
      // Progress is proven by dense revisions; RequestProgress is never used, since etcd before
      // 3.4.25 / 3.5.8 may answer it ahead of undelivered events (etcd issue 15220).
      log.info("etcd {} runs version {}; progress comes from dense revisions and periodic notifications only",
          endpoint, version);
    } catch (Exception e) {
      log.warn("cannot read etcd's version from {} yet ({}); continuing", endpoint, e.toString());
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private synchronized void startMaterializerOnce() {
    if (config.runMaterializer() && materializer == null && running) {
      materializer = new StateMaterializer(config.kafkaBootstrap(), config.topicPrefix(), config.maxRecordBytes(),
          e -> fail("state materializer failed: " + e, e));
      materializer.start();
    }
  }

  /** Reads back where the events topic ends; on an empty topic publishes the initial state. */
  private long startPoint(EventsPublisher publisher) throws Exception {
    PublishedLog published = new PublishedLog(config.kafkaBootstrap(), eventsTopic, stateTopic,
        config.transactionalId());
    Optional<Long> tail = published.lastEventsRevision();
    if (tail.isPresent()) {
      log.info("[revision {}] resuming after the last revision in {}", tail.get(), eventsTopic);
      return published(tail.get());
    }
    Optional<StateCheckpoint> checkpoint = published.checkpoint();
    if (checkpoint.isPresent()) {
      log.info("[revision {}] {} is empty; resuming after the checkpoint of {}", checkpoint.get().getRevision(),
          eventsTopic, stateTopic);
      return published(checkpoint.get().getRevision());
    }
    return resync(publisher, Map.of(), Resync.Reason.INITIAL, 0, 0);
  }

  private long resync(EventsPublisher publisher, Map<com.google.protobuf.ByteString, io.watchfanout.schema.v1.KeyValue> before,
      Resync.Reason reason, long compactRevision, long lastRecordRevision) throws Exception {
    notReady = "publishing the state of etcd (" + reason + ")";
    EtcdSnapshot snapshot = new EtcdSnapshotReader(etcd, config.snapshotPageSize(), SNAPSHOT_REQUEST_TIMEOUT).read(range);
    List<KeyedRecord> records = Resynchronizer.records(before, snapshot, reason, compactRevision, lastRecordRevision);
    checkSizes(records);
    publish(publisher, records);
    metrics.eventsPublished.inc(records.size() - 1);
    metrics.resyncs.labels(reason.name().toLowerCase(java.util.Locale.ROOT)).inc();
    log.info("[revision {}] published a resync ({}) of {} with {} entries ({} keys in etcd)", snapshot.revision(),
        reason, range, records.size() - 1, snapshot.kvs().size());
    return published(snapshot.revision());
  }

  private long published(long revision) {
    lastPublished = revision;
    metrics.lastPublishedRevision.set(revision);
    return revision;
  }

  /** Watches from lastPublished + 1 and publishes until a failure that needs a new session. */
  private void stream(EtcdWatchFeed feed, EventsPublisher publisher, long lastPublished) throws Exception {
    try {
      streamWatch(feed, publisher, lastPublished);
    } finally {
      // Whatever ended the session, etcd's events wait in etcd, not in this process.
      feed.stop();
    }
  }

  private void streamWatch(EtcdWatchFeed feed, EventsPublisher publisher, long lastPublished) throws Exception {
    RevisionAssembler assembler = new RevisionAssembler(range, lastPublished);
    feed.watchFrom(lastPublished + 1);
    Duration backoff = WATCH_BACKOFF_START;
    long gapAt = -1; // the proven revision at the last skip, to tell a repeated skip
    notReady = "";
    refreshGauges();
    Duration poll = min(POLL, config.heartbeatInterval());
    while (running) {
      if (election != null && !election.isLeader()) {
        throw new LeadershipLostException();
      }
      WatchSignal signal = feed.poll(poll);
      if (signal instanceof WatchSignal.Batch && !notReady.isEmpty()) {
        notReady = "";
        refreshGauges();
        backoff = WATCH_BACKOFF_START;
      }
      boolean progressNotify = false;
      try {
        while (signal instanceof WatchSignal.Batch b) {
          monitor.observeEtcdRevision(b.batch().headerRevision());
          progressNotify |= b.batch().progressNotify();
          assembler.accept(b.batch());
          signal = assembler.pendingRecords() >= config.maxBatchRecords() ? null : feed.poll(Duration.ZERO);
        }
      } catch (DenseRevisionException e) {
        metrics.watchRestarts.labels("gap").inc();
        publishPending(publisher, assembler);
        lastPublished = assembler.provenRevision();
        if (lastPublished == gapAt) {
          // The same revision skipped by a fresh watch: re-watching again would loop (etcd
          // issue 18089). Rebuild what was skipped, then watch from where the watch went on.
          lastPublished = rebuildSkipped(publisher, e);
          gapAt = -1;
        } else {
          log.warn("[revision {}] {}; re-watching from {}", lastPublished, e.getMessage(), lastPublished + 1);
          gapAt = lastPublished;
        }
        assembler = new RevisionAssembler(range, lastPublished);
        feed.watchFrom(lastPublished + 1);
        continue;
      }
      lastPublished = publishPending(publisher, assembler);
      metrics.watchQueueBytes.set(feed.queuedBytes());
      if (signal == null || signal instanceof WatchSignal.Batch) {
        heartbeatIfDue(publisher, assembler, progressNotify);
      }
      if (signal instanceof WatchSignal.Failed f) {
        if (f.compactRevision() > 0) {
          log.warn("[revision {}] etcd compacted revision {} before the ingester read it; resynchronising",
              lastPublished, f.compactRevision());
          metrics.watchRestarts.labels("compacted").inc();
          lastPublished = resync(publisher,
              new PublishedLog(config.kafkaBootstrap(), eventsTopic, stateTopic, config.transactionalId()).state(),
              Resync.Reason.COMPACTED, f.compactRevision(), lastPublished);
        } else {
          notReady = "etcd watch failed: " + f.cause();
          metrics.ready.set(0);
          metrics.watchRestarts.labels("error").inc();
          log.warn("[revision {}] etcd watch failed ({}); re-watching from {} in {} ms", lastPublished, f.cause(),
              lastPublished + 1, backoff.toMillis());
          if (!sleep(backoff)) {
            return;
          }
          backoff = min(backoff.multipliedBy(2), config.retryBackoffMax());
        }
        assembler = new RevisionAssembler(range, lastPublished);
        feed.watchFrom(lastPublished + 1);
      } else if (signal instanceof WatchSignal.Overflow o) {
        log.warn("[revision {}] {} bytes waiting for Kafka; closed the etcd watch, re-watching from {}",
            lastPublished, o.queuedBytes(), lastPublished + 1);
        metrics.watchRestarts.labels("overflow").inc();
        assembler = new RevisionAssembler(range, lastPublished);
        feed.watchFrom(lastPublished + 1);
      }
    }
  }

  /**
   * Rebuilds the revisions a watch skipped twice from range reads against the published
   * state ({@link SkippedRevision}) and publishes them; falls back to a resynchronisation
   * when etcd no longer holds them or they are too many to read one by one.
   *
   * @return the last published revision: the one before {@code gap.seen()}
   */
  private long rebuildSkipped(EventsPublisher publisher, DenseRevisionException gap) throws Exception {
    long proven = gap.expected() - 1;
    long skipped = gap.seen() - gap.expected();
    notReady = "etcd's watch skipped revision " + gap.expected() + " twice; rebuilding it from range reads";
    metrics.ready.set(0);
    log.warn("[revision {}] {} again: the revision(s) {}..{} are never delivered (etcd issue 18089: a DELETE at the "
        + "compaction revision); rebuilding them from range reads", proven, gap.getMessage(), gap.expected(),
        gap.seen() - 1);
    PublishedLog published = new PublishedLog(config.kafkaBootstrap(), eventsTopic, stateTopic,
        config.transactionalId());
    Map<com.google.protobuf.ByteString, io.watchfanout.schema.v1.KeyValue> state = published.state();
    if (skipped > MAX_REBUILT_REVISIONS) {
      log.warn("[revision {}] {} revisions skipped (more than {}); resynchronising instead", proven, skipped,
          MAX_REBUILT_REVISIONS);
      metrics.skippedRevisions.labels("resync").inc(skipped);
      return resync(publisher, state, Resync.Reason.COMPACTED, gap.expected(), proven);
    }
    RevisionAssembler assembler = new RevisionAssembler(range, proven);
    EtcdSnapshotReader reader = new EtcdSnapshotReader(etcd, config.snapshotPageSize(), SNAPSHOT_REQUEST_TIMEOUT);
    int events = 0;
    for (long revision = gap.expected(); revision < gap.seen(); revision++) {
      EtcdSnapshot at;
      try {
        at = reader.read(range, revision);
      } catch (java.util.concurrent.ExecutionException e) {
        if (!String.valueOf(e.getCause()).contains("compacted")) {
          throw e;
        }
        log.warn("[revision {}] etcd compacted revision {} before it could be read; resynchronising", proven,
            revision);
        metrics.skippedRevisions.labels("resync").inc(skipped);
        return resync(publisher, state, Resync.Reason.COMPACTED, revision, proven);
      }
      List<io.watchfanout.schema.v1.Event> rebuilt = SkippedRevision.events(state, at);
      assembler.acceptRebuilt(revision, rebuilt);
      events += rebuilt.size();
      state = SkippedRevision.state(at);
    }
    long last = publishPending(publisher, assembler);
    metrics.skippedRevisions.labels("rebuilt").inc(skipped);
    log.info("[revision {}] rebuilt {} skipped revision(s) with {} event(s) in {}; watching from {}", last, skipped,
        events, range, last + 1);
    return last;
  }

  /**
   * Publishes a heartbeat (a progress record that may repeat the last revision) at an etcd
   * progress notification or after {@code --heartbeat-interval} without a record, but only
   * while the ingester is ready and caught up with etcd's revision as last probed: a watch
   * that stopped delivering while etcd moves on must not look alive to the nodes.
   */
  private void heartbeatIfDue(EventsPublisher publisher, RevisionAssembler assembler, boolean progressNotify)
      throws Exception {
    boolean due = progressNotify || System.nanoTime() - lastPublishNanos >= config.heartbeatInterval().toNanos();
    long etcdRevision = monitor.etcdRevision();
    if (!due || etcdRevision < 0 || etcdRevision > assembler.provenRevision() || !notReadyReason().isEmpty()) {
      return;
    }
    publish(publisher, List.of(assembler.heartbeat()));
    metrics.progressRecords.inc();
    metrics.heartbeats.inc();
  }

  /**
   * Producer settings that keep {@code initTransactions()} inside the election lease: a
   * replica deposed while it waited for Kafka (its lease lapsed, another was elected) must
   * not come back and fence the new leader. Checked right before the producer is made, after
   * whatever blocked before (topic creation, the materializer); the producer gives up (and is
   * closed) when the call outlasts the lease.
   *
   * @throws LeadershipLostException when the lease has lapsed already
   */
  private Map<String, Object> fencingBound() throws LeadershipLostException {
    if (election == null) {
      return Map.of();
    }
    Duration left = election.leadershipLeft();
    if (left.isZero()) {
      throw new LeadershipLostException();
    }
    return Map.of(org.apache.kafka.clients.producer.ProducerConfig.MAX_BLOCK_MS_CONFIG,
        Math.max(1, Math.min(left.toMillis(), MAX_FENCED_BLOCK_MILLIS)));
  }

  /** Publishes one transaction, tracking how long its commit waits (readiness). */
  private void publish(EventsPublisher publisher, List<KeyedRecord> records) throws Exception {
    if (election != null && !election.isLeader()) {
      throw new LeadershipLostException(); // closes the producer on the way out
    }
    publishStartedNanos = System.nanoTime();
    try {
      publisher.publish(records);
    } finally {
      publishStartedNanos = 0;
    }
    lastPublishNanos = System.nanoTime();
    metrics.transactions.labels("commit").inc();
    long now = System.currentTimeMillis();
    for (KeyedRecord r : records) {
      if (r.timestampMillis() > 0 && r.value().hasEvent() && r.value().getEvent().getIndex() == 0) {
        metrics.eventLatency.labels("appended").observe((now - r.timestampMillis()) / 1000.0);
      }
    }
  }

  /** Publishes every complete revision the assembler holds; returns the last published revision. */
  private long publishPending(EventsPublisher publisher, RevisionAssembler assembler) throws Exception {
    while (true) {
      boolean last = assembler.pendingRecords() <= config.maxBatchRecords();
      List<KeyedRecord> records = last ? assembler.drain(true) : assembler.drainUpTo(config.maxBatchRecords());
      if (!records.isEmpty()) {
        checkSizes(records);
        publish(publisher, records);
        for (KeyedRecord r : records) {
          if (r.value().hasProgress()) {
            metrics.progressRecords.inc();
          } else {
            metrics.eventsPublished.inc();
          }
        }
        published(records.get(records.size() - 1).revision());
      }
      if (last) {
        return lastPublished;
      }
    }
  }

  private void checkSizes(List<KeyedRecord> records) {
    for (KeyedRecord r : records) {
      int size = r.key().length + r.value().getSerializedSize();
      if (size > config.maxRecordBytes() - RECORD_OVERHEAD_BYTES) {
        throw new RecordTooLargeException("the event of key " + KeyBytes.encode(r.key()) + " at revision "
            + r.revision() + " needs " + size + " bytes (limit: --max-record-bytes " + config.maxRecordBytes()
            + " minus " + RECORD_OVERHEAD_BYTES + " bytes of overhead); raise --max-record-bytes and the topics' max.message.bytes");
      }
    }
  }

  private void fail(String reason, Throwable cause) {
    if (fatal.isEmpty()) {
      fatal = reason;
      log.error("{}; the ingester stops", reason, cause);
    }
    running = false;
    metrics.ready.set(0);
  }

  private boolean sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
      return running;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Which of the two services a failure came from, for the line that says what the
   * publisher waits for: by the client library's exception types, and for the bare timeouts
   * both libraries' futures throw, by what the dependency probes found.
   */
  private String dependencyOf(Throwable e) {
    String kafka = "Kafka at " + config.kafkaBootstrap();
    String etcdName = "etcd at " + String.join(",", config.etcdEndpoints());
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof org.apache.kafka.common.KafkaException) {
        return kafka;
      }
      if (t instanceof io.etcd.jetcd.common.exception.EtcdException || t instanceof io.grpc.StatusRuntimeException) {
        return etcdName;
      }
    }
    if (!monitor.etcdUp()) {
      return etcdName;
    }
    return monitor.kafkaUp() ? kafka + " or " + etcdName : kafka;
  }

  /** This process's name in elections and logs: host name and pid. */
  private static String identity() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      host = "unknown-host";
    }
    return host + "/" + ProcessHandle.current().pid();
  }

  /** The election lease was not renewed in time: another replica may lead by now. */
  private static final class LeadershipLostException extends Exception {
    private static final long serialVersionUID = 1L;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /**
   * Stops publishing after the transaction in flight (committed or aborted), closes the
   * watch, the materializer and the endpoints. Waits up to 20 s.
   */
  @Override
  public void close() {
    running = false;
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
    if (election != null) {
      election.resign();
    }
    synchronized (this) {
      if (materializer != null) {
        materializer.close();
      }
    }
    monitor.close();
    etcd.close();
    if (ops != null) {
      ops.close();
    }
  }
}
