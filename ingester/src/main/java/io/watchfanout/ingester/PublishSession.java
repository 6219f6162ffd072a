package io.watchfanout.ingester;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.watchfanout.common.KeyBytes;
import io.watchfanout.common.KeyRange;
import io.watchfanout.ingester.election.LeaderElection;
import io.watchfanout.ingester.etcd.EtcdDigestReader;
import io.watchfanout.ingester.etcd.EtcdSnapshot;
import io.watchfanout.ingester.etcd.EtcdSnapshotReader;
import io.watchfanout.ingester.etcd.EtcdWatchFeed;
import io.watchfanout.ingester.etcd.WatchSignal;
import io.watchfanout.ingester.ops.DependencyMonitor;
import io.watchfanout.ingester.ops.IngesterMetrics;
import io.watchfanout.ingester.ops.IngesterReadiness;
import io.watchfanout.ingester.publish.DenseRevisionException;
import io.watchfanout.ingester.publish.DigestSchedule;
import io.watchfanout.ingester.publish.EventsPublisher;
import io.watchfanout.ingester.publish.KeyedRecord;
import io.watchfanout.ingester.publish.PublishFailure;
import io.watchfanout.ingester.publish.PublishedLog;
import io.watchfanout.ingester.publish.Resynchronizer;
import io.watchfanout.ingester.publish.RevisionAssembler;
import io.watchfanout.ingester.publish.SkippedRevision;
import io.watchfanout.ingester.topics.TopicManager;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Resync;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateDigest;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The publisher's session with etcd and Kafka, and the resume point that outlives each one. A
 * session ({@link #run}) makes sure of the topics, waits for the leadership when elected, makes
 * a new transactional producer (fencing any older one), reads its start point back from the
 * events topic (or the state topic's checkpoint, or, when both are empty, publishes etcd's state
 * as of the oldest revision etcd holds: {@link HistoryStart}), then
 * watches from that point + 1: responses pass through a {@link RevisionAssembler} and are
 * committed in Kafka transactions that never split a revision, with a resync after a compaction,
 * a rebuild of revisions the watch skipped, and heartbeats. It ends on a {@link PublishFailure}
 * (classified by {@link PublishFailures}) or when the ingester stops; the publisher loop decides
 * what follows.
 *
 * <p>Thread-safety: {@link #run} on the publisher thread only; {@link #lastPublished} and
 * {@link #refreshGauges} from any thread.
 */
final class PublishSession {
    // The Ingester's logger: the publisher's lines keep the name they have always been logged under.
    private static final Logger log = LoggerFactory.getLogger(Ingester.class);
    private static final Duration POLL = Duration.ofMillis(500);
    /** Bound of one range request of a resync or a rebuild. */
    private static final Duration SNAPSHOT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    /** More skipped revisions than this are resynchronised rather than read one by one. */
    private static final long MAX_REBUILT_REVISIONS = 64;
    /** First wait after a failed watch or publish of the running publisher; doubles up to {@code --retry-backoff-max}. */
    private static final Duration WATCH_BACKOFF_START = Duration.ofMillis(100);
    /**
     * Upper bound of how long a producer may block in {@code initTransactions()} under an
     * election lease, even when the lease has longer left: a stuck broker is retried sooner.
     */
    private static final long MAX_FENCED_BLOCK_MILLIS = 10_000;
    /** What a record needs beyond its key and value (headers, batch framing), kept free of --max-record-bytes. */
    private static final int RECORD_OVERHEAD_BYTES = 256;

    private final IngesterConfig config;
    private final KeyRange range;
    private final String eventsTopic;
    private final String stateTopic;
    private final Client etcd;
    private final LeaderElection election;
    private final DependencyMonitor monitor;
    private final IngesterReadiness readiness;
    private final IngesterMetrics metrics;
    private final PublishFailures failures;
    private final CommitRetryBound commitRetry;
    private final BooleanSupplier running;
    private final Runnable afterStartPoint;
    /** The resume point: every revision up to this one is in the events topic. */
    private volatile long lastPublished;
    /** A standby's Kafka clients, made while it campaigns; for one session; publisher thread only. */
    private WarmStandby warm;
    /** How long the session's producer took to be made and initialised, for the log; publisher thread only. */
    private long producerMillis;
    /** When the last record was published (System.nanoTime()); publisher thread only. */
    private long lastPublishNanos = System.nanoTime();
    /** The session's digest reads, null without them; publisher thread only. */
    private DigestSchedule digests;

    /**
     * @param config the settings
     * @param etcd the ingester's etcd client (range reads of resyncs and rebuilds)
     * @param election the leader election, or null without one
     * @param monitor the dependency probes (etcd's revision, which dependency failed)
     * @param readiness where the publisher's state goes
     * @param metrics the ingester's metrics
     * @param running false once the ingester stops
     * @param afterStartPoint run once the session has its start point, right before it watches
     *     (the state materializer's start); must not block: the watch waits for it
     */
    PublishSession(
            IngesterConfig config,
            Client etcd,
            LeaderElection election,
            DependencyMonitor monitor,
            IngesterReadiness readiness,
            IngesterMetrics metrics,
            BooleanSupplier running,
            Runnable afterStartPoint) {
        this.config = config;
        this.range = KeyRange.prefix(config.etcd().keyPrefix());
        this.eventsTopic = io.watchfanout.schema.WatchFanoutSerdes.eventsTopic(
                config.kafka().topicPrefix());
        this.stateTopic = io.watchfanout.schema.WatchFanoutSerdes.stateTopic(
                config.kafka().topicPrefix());
        this.etcd = etcd;
        this.election = election;
        this.monitor = monitor;
        this.readiness = readiness;
        this.metrics = metrics;
        this.failures = new PublishFailures(config, monitor::etcdUp, monitor::kafkaUp);
        this.running = running;
        this.commitRetry = new CommitRetryBound(
                election == null ? null : election::leadershipLeft,
                config.commit().transactionTimeout(),
                running);
        this.afterStartPoint = afterStartPoint;
    }

    /** The resume point: the last revision known to be in the events topic; 0 before the first session's start point. */
    long lastPublished() {
        return lastPublished;
    }

    /**
     * Runs one session until it fails or the ingester stops.
     *
     * @param feed the ingester's etcd watch; stopped when the session ends
     * @param retry the delay between sessions, reset once this one has its start point
     * @throws PublishFailure how the session ended
     * @throws InterruptedException when the publisher thread was interrupted
     */
    void run(EtcdWatchFeed feed, RetryDelay retry) throws PublishFailure, InterruptedException {
        warm = null;
        try {
            if (election != null && !election.isLeader()) {
                metrics.ready.set(0);
                readiness.state("starting: campaigning for " + config.roles().electionName());
                election.awaitLeadership(this::prepareStandby);
            }
            if (warm == null) {
                ensureTopics();
            }
            long producerStart = System.nanoTime();
            EventsPublisher prepared = warm == null ? null : warm.takeProducer(election.leadershipLeft());
            try (EventsPublisher publisher = prepared != null ? prepared : newProducer()) {
                producerMillis = (System.nanoTime() - producerStart) / 1_000_000;
                long from = startPoint(publisher, warm);
                retry.reset();
                afterStartPoint.run();
                try (DigestSchedule schedule = digestSchedule()) {
                    digests = schedule;
                    stream(feed, publisher, from);
                } finally {
                    digests = null;
                }
            }
        } catch (PublishFailure | InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw failures.classify(e);
        } finally {
            if (warm != null) {
                warm.close();
                warm = null;
            }
        }
    }

    /**
     * What a standby does while its campaign is out: it checks the topics and makes its Kafka
     * clients ({@link WarmStandby}) now rather than once elected, since what a new leader does
     * between its election and its first record is the watchers' stall at a hand-over. Skipped
     * while Kafka is known down; a failure only leaves {@link #warm} null (the leader's session
     * does it all again). It reports the replica a standby only then: one still making its clients
     * could not take over at once, and whoever waits for a standby before stopping the leader (a
     * rolling update, the fault run) should not take it for one yet.
     */
    private void prepareStandby() {
        if (monitor.kafkaUp()) {
            // Not a word of "standby" before they are made: that is what a rolling update or the
            // fault run looks for.
            readiness.state("starting: making the Kafka clients it needs to take over");
            try {
                ensureTopics();
                warm = WarmStandby.prepare(this::preparedProducer, publishedLog());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RuntimeException e) {
                log.info("cannot prepare the Kafka clients of a standby ({}); campaigning all the same", e.toString());
            }
        }
        readiness.state("standby: another replica leads " + config.roles().electionName());
    }

    private void ensureTopics() throws ExecutionException, TimeoutException, InterruptedException {
        new TopicManager(config.kafka().bootstrap(), config.kafka().settings()).ensure(config.topicSettings());
    }

    /** A producer made and initialised now, within the leadership left ({@link #fencingBound()}). */
    private EventsPublisher newProducer() throws PublishFailure.LeadershipLost {
        return new EventsPublisher(
                config.kafka().bootstrap(),
                config.kafka().settings(),
                eventsTopic,
                config.commit().transactionalId(),
                config.kafka().maxRecordBytes(),
                config.commit().transactionTimeout(),
                producerSettings());
    }

    /**
     * A standby's producer, made before its election and initialised after it: its
     * {@code initTransactions()} may block a third of the lease's TTL (at most
     * {@link #MAX_FENCED_BLOCK_MILLIS}), which a fresh leadership leaves at least.
     */
    private EventsPublisher preparedProducer() {
        long block = Math.max(1, Math.min(config.roles().electionLeaseTtl().toMillis() / 3, MAX_FENCED_BLOCK_MILLIS));
        Map<String, Object> settings = new HashMap<>();
        settings.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, config.kafka().compression());
        settings.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, block);
        return EventsPublisher.uninitialised(
                config.kafka().bootstrap(),
                config.kafka().settings(),
                eventsTopic,
                config.commit().transactionalId(),
                config.kafka().maxRecordBytes(),
                config.commit().transactionTimeout(),
                settings);
    }

    /** IngesterReadiness and the gauges that depend on what the probes learnt; after each round of probes. */
    void refreshGauges() {
        metrics.ready.set(readiness.reason().isEmpty() ? 1 : 0);
        long etcdRevision = monitor.etcdRevision();
        boolean leading = election == null || election.isLeader();
        // Unknown is NaN, not 0: a lag of 0 would claim the tier is current.
        metrics.etcdRevision.set(etcdRevision < 0 ? Double.NaN : etcdRevision);
        metrics.watchLagRevisions.set(
                etcdRevision < 0 || !leading ? Double.NaN : Math.max(0, etcdRevision - lastPublished));
    }

    private PublishedLog publishedLog() {
        return new PublishedLog(
                config.kafka().bootstrap(),
                config.kafka().settings(),
                eventsTopic,
                stateTopic,
                config.commit().transactionalId());
    }

    private EtcdSnapshotReader snapshotReader() {
        return new EtcdSnapshotReader(etcd, config.history().snapshotPageSize(), SNAPSHOT_REQUEST_TIMEOUT);
    }

    /**
     * Reads back where the events topic ends, with the standby's open reader if there is one; on
     * an empty topic publishes the initial state.
     */
    private long startPoint(EventsPublisher publisher, WarmStandby warm) throws Exception {
        PublishedLog published = publishedLog();
        long tailStart = System.nanoTime();
        Optional<Long> tail =
                warm == null ? published.lastEventsRevision() : published.lastEventsRevision(warm.tailReader());
        if (tail.isPresent()) {
            log.info(
                    "[revision {}] resuming after the last revision in {} (producer ready in {} ms, tail read in {} ms)",
                    tail.get(),
                    eventsTopic,
                    producerMillis,
                    (System.nanoTime() - tailStart) / 1_000_000);
            return published(tail.get());
        }
        Optional<StateCheckpoint> checkpoint = published.checkpoint();
        if (checkpoint.isPresent()) {
            log.info(
                    "[revision {}] {} is empty; resuming after the checkpoint of {}",
                    checkpoint.get().getRevision(),
                    eventsTopic,
                    stateTopic);
            return published(checkpoint.get().getRevision());
        }
        return initialLoad(publisher);
    }

    /**
     * Publishes etcd's state as of the oldest revision it holds ({@link HistoryStart}) as an
     * INITIAL resync; the watch then publishes every event since. A compaction that overtakes the
     * read sends it back to look for the oldest revision again.
     */
    private long initialLoad(EventsPublisher publisher) throws Exception {
        while (true) {
            readiness.state("looking for the oldest revision etcd holds");
            long oldest = HistoryStart.oldestRevision(
                    etcd, range, config.history().initialRevisions(), SNAPSHOT_REQUEST_TIMEOUT);
            log.info(
                    "[revision {}] {} is empty: publishing the state of {} as of revision {}, the oldest that etcd "
                            + "holds within --initial-history-revisions {}, and every event since",
                    oldest,
                    eventsTopic,
                    range,
                    oldest,
                    config.history().initialRevisions());
            try {
                return resync(publisher, Map.of(), Resync.Reason.INITIAL, 0, 0, oldest);
            } catch (ExecutionException e) {
                if (!PublishFailures.compactedRead(e.getCause())) {
                    throw e;
                }
                log.info("[revision {}] etcd compacted it while it was read; looking again", oldest);
            }
        }
    }

    private long resync(
            EventsPublisher publisher,
            Map<ByteString, KeyValue> before,
            Resync.Reason reason,
            long compactRevision,
            long lastRecordRevision)
            throws Exception {
        return resync(publisher, before, reason, compactRevision, lastRecordRevision, 0);
    }

    /** A resync of the state as of {@code atRevision}, or of the current state when it is 0. */
    private long resync(
            EventsPublisher publisher,
            Map<ByteString, KeyValue> before,
            Resync.Reason reason,
            long compactRevision,
            long lastRecordRevision,
            long atRevision)
            throws Exception {
        readiness.state("publishing the state of etcd (" + reason + ")");
        EtcdSnapshot snapshot = snapshotReader().read(range, atRevision);
        List<KeyedRecord> records =
                Resynchronizer.records(before, snapshot, reason, compactRevision, lastRecordRevision);
        checkSizes(records);
        publish(publisher, records);
        metrics.eventsPublished.inc(records.size() - 1);
        metrics.resyncs.labels(reason.name().toLowerCase(Locale.ROOT)).inc();
        log.info(
                "[revision {}] published a resync ({}) of {} with {} entries ({} keys in etcd)",
                snapshot.revision(),
                reason,
                range,
                records.size() - 1,
                snapshot.kvs().size());
        return published(snapshot.revision());
    }

    /** Moves the resume point; the gauge follows it. */
    private long published(long revision) {
        lastPublished = revision;
        metrics.lastPublishedRevision.set(revision);
        return revision;
    }

    /** Watches from {@code from} + 1 and publishes until a failure that needs a new session. */
    private void stream(EtcdWatchFeed feed, EventsPublisher publisher, long from) throws Exception {
        try {
            streamWatch(feed, publisher, from);
        } finally {
            // Whatever ended the session, etcd's events wait in etcd, not in this process.
            feed.stop();
        }
    }

    private void streamWatch(EtcdWatchFeed feed, EventsPublisher publisher, long from) throws Exception {
        long proven = from; // what this watch proved and published; the next watch starts after it
        RevisionAssembler assembler = new RevisionAssembler(range, proven);
        feed.watchFrom(proven + 1);
        RetryDelay retry = new RetryDelay(WATCH_BACKOFF_START, config.recovery().retryBackoffMax(), running);
        long gapAt = -1; // the proven revision at the last skip, to tell a repeated skip
        readiness.state("");
        refreshGauges();
        Duration poll = POLL.compareTo(config.commit().heartbeatInterval()) <= 0
                ? POLL
                : config.commit().heartbeatInterval();
        while (running.getAsBoolean()) {
            if (election != null && !election.isLeader()) {
                throw new PublishFailure.LeadershipLost();
            }
            WatchSignal signal = feed.poll(poll);
            if (signal instanceof WatchSignal.Batch && !readiness.state().isEmpty()) {
                readiness.state("");
                refreshGauges();
                retry.reset();
            }
            boolean progressNotify = false;
            try {
                while (signal instanceof WatchSignal.Batch b) {
                    monitor.observeEtcdRevision(b.batch().headerRevision());
                    progressNotify |= b.batch().progressNotify();
                    assembler.accept(b.batch());
                    signal = assembler.pendingRecords() >= config.commit().maxBatchRecords()
                            ? null
                            : feed.poll(Duration.ZERO);
                }
            } catch (DenseRevisionException e) {
                metrics.watchRestarts.labels("gap").inc();
                publishPending(publisher, assembler);
                proven = assembler.provenRevision();
                if (proven == gapAt) {
                    // The same revision skipped by a fresh watch: re-watching again would loop (etcd
                    // issue 18089). Rebuild what was skipped, then watch from where the watch went on.
                    proven = rebuildSkipped(publisher, e);
                    gapAt = -1;
                } else {
                    log.warn("[revision {}] {}; re-watching from {}", proven, e.getMessage(), proven + 1);
                    gapAt = proven;
                }
                assembler = new RevisionAssembler(range, proven);
                feed.watchFrom(proven + 1);
                continue;
            }
            proven = publishPending(publisher, assembler);
            metrics.watchQueueBytes.set(feed.queuedBytes());
            if (signal == null || signal instanceof WatchSignal.Batch) {
                heartbeatIfDue(publisher, assembler, progressNotify);
                publishDigestIfRead(publisher, assembler);
            }
            if (signal instanceof WatchSignal.Failed f) {
                if (f.compactRevision() > 0) {
                    log.warn(
                            "[revision {}] etcd compacted revision {} before the ingester read it; resynchronising",
                            proven,
                            f.compactRevision());
                    metrics.watchRestarts.labels("compacted").inc();
                    proven = resync(
                            publisher, publishedLog().state(), Resync.Reason.COMPACTED, f.compactRevision(), proven);
                } else {
                    readiness.state("etcd watch failed: " + f.cause());
                    metrics.ready.set(0);
                    metrics.watchRestarts.labels("error").inc();
                    log.warn(
                            "[revision {}] etcd watch failed ({}); re-watching from {} in {} ms",
                            proven,
                            f.cause(),
                            proven + 1,
                            retry.millis());
                    if (!retry.await()) {
                        return;
                    }
                }
                assembler = new RevisionAssembler(range, proven);
                feed.watchFrom(proven + 1);
            } else if (signal instanceof WatchSignal.Overflow o) {
                log.warn(
                        "[revision {}] {} bytes waiting for Kafka; closed the etcd watch, re-watching from {}",
                        proven,
                        o.queuedBytes(),
                        proven + 1);
                metrics.watchRestarts.labels("overflow").inc();
                assembler = new RevisionAssembler(range, proven);
                feed.watchFrom(proven + 1);
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
        readiness.state("etcd's watch skipped revision " + gap.expected() + " twice; rebuilding it from range reads");
        metrics.ready.set(0);
        log.warn(
                "[revision {}] {} again: the revision(s) {}..{} are never delivered (etcd issue 18089: a DELETE at the "
                        + "compaction revision); rebuilding them from range reads",
                proven,
                gap.getMessage(),
                gap.expected(),
                gap.seen() - 1);
        Map<ByteString, KeyValue> state = publishedLog().state();
        if (skipped > MAX_REBUILT_REVISIONS) {
            log.warn(
                    "[revision {}] {} revisions skipped (more than {}); resynchronising instead",
                    proven,
                    skipped,
                    MAX_REBUILT_REVISIONS);
            metrics.skippedRevisions.labels("resync").inc(skipped);
            return resync(publisher, state, Resync.Reason.COMPACTED, gap.expected(), proven);
        }
        RevisionAssembler assembler = new RevisionAssembler(range, proven);
        EtcdSnapshotReader reader = snapshotReader();
        int events = 0;
        for (long revision = gap.expected(); revision < gap.seen(); revision++) {
            EtcdSnapshot at;
            try {
                at = reader.read(range, revision);
            } catch (ExecutionException e) {
                if (!PublishFailures.compactedRead(e.getCause())) {
                    throw e;
                }
                log.warn(
                        "[revision {}] etcd compacted revision {} before it could be read; resynchronising",
                        proven,
                        revision);
                metrics.skippedRevisions.labels("resync").inc(skipped);
                return resync(publisher, state, Resync.Reason.COMPACTED, revision, proven);
            }
            List<Event> rebuilt = SkippedRevision.events(state, at);
            assembler.acceptRebuilt(revision, rebuilt);
            events += rebuilt.size();
            state = SkippedRevision.state(at);
        }
        long last = publishPending(publisher, assembler);
        metrics.skippedRevisions.labels("rebuilt").inc(skipped);
        log.info(
                "[revision {}] rebuilt {} skipped revision(s) with {} event(s) in {}; watching from {}",
                last,
                skipped,
                events,
                range,
                last + 1);
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
        boolean due = progressNotify
                || System.nanoTime() - lastPublishNanos
                        >= config.commit().heartbeatInterval().toNanos();
        long etcdRevision = monitor.etcdRevision();
        if (!due
                || etcdRevision < 0
                || etcdRevision > assembler.provenRevision()
                || !readiness.reason().isEmpty()) {
            return;
        }
        publish(publisher, List.of(assembler.heartbeat()));
        metrics.progressRecords.inc();
        metrics.heartbeats.inc();
    }

    /** The session's digest reads ({@code --digest-interval}), or null when they are off. */
    private DigestSchedule digestSchedule() {
        DigestSchedule.Settings s = config.digests();
        if (!s.enabled()) {
            return null;
        }
        EtcdDigestReader reader = new EtcdDigestReader(
                etcd, s.pageSize(), DigestSchedule.KEYS_PER_RANGE, s.pagePause(), SNAPSHOT_REQUEST_TIMEOUT);
        return new DigestSchedule(s.interval(), reader, range, this::lastPublished, metrics);
    }

    /**
     * Publishes the digest read last, if one is waiting, on a progress record; only with nothing
     * pending, so that it never falls inside a revision.
     */
    private void publishDigestIfRead(EventsPublisher publisher, RevisionAssembler assembler) throws Exception {
        if (digests == null || assembler.pendingRecords() > 0) {
            return;
        }
        Optional<StateDigest> digest = digests.take();
        if (digest.isEmpty() || digest.get().getRevision() > assembler.provenRevision()) {
            return;
        }
        publish(publisher, List.of(assembler.digest(digest.get())));
        metrics.progressRecords.inc();
        metrics.digestsPublished.inc();
    }

    /** What the publisher's producer sets beyond its defaults: the compression, and {@link #fencingBound()}. */
    private Map<String, Object> producerSettings() throws PublishFailure.LeadershipLost {
        Map<String, Object> settings = new HashMap<>(fencingBound());
        settings.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, config.kafka().compression());
        return settings;
    }

    /**
     * Producer settings that keep {@code initTransactions()} inside the election lease: a
     * replica deposed while it waited for Kafka (its lease lapsed, another was elected) must
     * not come back and fence the new leader. Checked right before the producer is made, after
     * whatever blocked before (topic creation, the materializer); the producer gives up (and is
     * closed) when the call outlasts the lease.
     *
     * @throws PublishFailure.LeadershipLost when the lease has lapsed already
     */
    private Map<String, Object> fencingBound() throws PublishFailure.LeadershipLost {
        if (election == null) {
            return Map.of();
        }
        Duration left = election.leadershipLeft();
        if (left.isZero()) {
            throw new PublishFailure.LeadershipLost();
        }
        return Map.of(
                ProducerConfig.MAX_BLOCK_MS_CONFIG, Math.max(1, Math.min(left.toMillis(), MAX_FENCED_BLOCK_MILLIS)));
    }

    /**
     * Publishes one transaction, tracking how long its commit waits (readiness); a commit that
     * times out is waited for again within {@link #commitRetry}'s bounds.
     */
    private void publish(EventsPublisher publisher, List<KeyedRecord> records) throws Exception {
        if (election != null && !election.isLeader()) {
            throw new PublishFailure.LeadershipLost(); // closes the producer on the way out
        }
        readiness.commitStarted();
        try {
            publisher.publish(records, commitRetry);
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            if (election != null && !election.isLeader()) {
                // Kafka timed out (a send, or a commit not waited for again) and the lease has
                // lapsed meanwhile: give way rather than start a producer that could fence a
                // newly elected leader.
                throw new PublishFailure.LeadershipLost();
            }
            throw e;
        } finally {
            readiness.commitEnded();
        }
        lastPublishNanos = System.nanoTime();
        metrics.transactions.labels("commit").inc();
        long now = System.currentTimeMillis();
        for (KeyedRecord r : records) {
            if (r.timestampMillis() > 0
                    && r.value().hasEvent()
                    && r.value().getEvent().getIndex() == 0) {
                metrics.eventLatency.labels("appended").observe((now - r.timestampMillis()) / 1000.0);
            }
        }
    }

    /** Publishes every complete revision the assembler holds; returns the last published revision. */
    private long publishPending(EventsPublisher publisher, RevisionAssembler assembler) throws Exception {
        while (true) {
            boolean last = assembler.pendingRecords() <= config.commit().maxBatchRecords();
            List<KeyedRecord> records = last
                    ? assembler.drain(true)
                    : assembler.drainUpTo(config.commit().maxBatchRecords());
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
            if (size > config.kafka().maxRecordBytes() - RECORD_OVERHEAD_BYTES) {
                throw new RecordTooLargeException("the event of key " + KeyBytes.encode(r.key()) + " at revision "
                        + r.revision() + " needs " + size + " bytes (limit: --max-record-bytes "
                        + config.kafka().maxRecordBytes()
                        + " minus " + RECORD_OVERHEAD_BYTES
                        + " bytes of overhead); raise --max-record-bytes and the topics' "
                        + "max.message.bytes");
            }
        }
    }
}
