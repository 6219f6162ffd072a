package io.watchfanout.fanout.kafka;

import com.google.protobuf.UnsafeByteOperations;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.watch.CacheFeed;
import io.watchfanout.fanout.watch.PreloadedRevision;
import io.watchfanout.fanout.watch.ValueArena;
import io.watchfanout.schema.DigestVerifier;
import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.RevisionChainException;
import io.watchfanout.schema.StateHash;
import io.watchfanout.schema.StateRecordDeserializer;
import io.watchfanout.schema.StateScan;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateDigest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds the watch cache from Kafka and keeps it current, on its own feed thread:
 * reads {@code <prefix>.state} to its end offsets (the snapshot and its checkpoint), then
 * tails {@code <prefix>.events} from the checkpoint's offset through a {@link RecordApplier}
 * into the {@link CacheFeed}. Consumers use {@code assign()} (every node reads every
 * partition; no group) and {@code read_committed}; caught up means position {@code >=} end
 * offset, since transaction markers take offsets. Ready once the events topic's end offset
 * at start has been reached and the cache holds a revision: on an events topic the ingester has
 * never written to (no record, no checkpoint) the node waits for the first record, and
 * {@code /readyz} says so.
 *
 * <p>A read of the state topic that may have outlived a tombstone is never served
 * ({@link StateScan}: it took half the topic's {@code delete.retention.ms} or more, counted from
 * its first fetch, pauses included): what it loaded is dropped and the read starts again, with a
 * log line, {@link RebuildProgress#rebuildRestarts()} and the reason on {@code /readyz}
 * ({@link CacheFeed#rebuildDelayed}). After {@link #QUIET_RESTARTS} restarts the reason says that
 * the rebuild cannot finish in time and what to change, and the reads go on, a pause apart.
 *
 * <p>Fail closed (docs/ARCHITECTURE.md, invariant 8): an undecodable record, a broken revision chain, a state topic
 * without a checkpoint or an events topic that no longer holds the checkpoint's offset stops
 * the feed for good ({@link CacheFeed#fail}); nothing is skipped. An unreachable Kafka or a
 * missing topic is waited for, with backoff and a log line saying what for.
 *
 * <p>Thread-safety: {@link #start()} and {@link #close()} from a controlling thread; all
 * Kafka calls on the feed thread.
 */
public final class KafkaCacheLoader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaCacheLoader.class);
    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(5);
    private static final long PROGRESS_LOG_NANOS = 5_000_000_000L;
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
    /** Restarts of the state read after which the node says it cannot finish in time, and pauses between reads. */
    static final int QUIET_RESTARTS = 3;
    /** The pause between reads of the state topic once {@link #QUIET_RESTARTS} were not enough. */
    private static final Duration RESTART_PAUSE = Duration.ofSeconds(10);
    /**
     * Test hook (a system property naming a file): while that file exists, the read of the state
     * topic stands still after each fetch that brought key-values, as a node paused or starved in
     * the middle of its rebuild would. Never set in production.
     */
    static final String HOLD_STATE_READ_PROPERTY = "watchfanout.test.holdStateReadWhileExists";
    /** The budget of a read before delete.retention.ms is known: none yet (it applies once learnt). */
    private static final Duration UNKNOWN_RETENTION = Duration.ofDays(365L * 1000);

    private final String bootstrap;
    private final KafkaClientSettings settings;
    private final String stateTopic;
    private final String eventsTopic;
    private final CacheFeed feed;
    private final RebuildProgress progress;
    private final String nodeId;
    private final Duration maxFeedStaleness;
    /** Events-topic records before the checkpoint read for the history window, 0 for none. */
    private final int preloadRecords;

    private final Thread thread;
    private volatile boolean running = true;
    private volatile KafkaConsumer<byte[], ?> current;
    /** Where revisions start in the events topic is noted into it, or null. */
    private volatile KafkaHistory olderHistory;
    /** Feed thread only: whether the feed was last reported stale. */
    private boolean feedStale;
    /** Feed thread only: whether the events consumer was last connected to a broker. */
    private boolean kafkaConnected = true;
    /** {@link #HOLD_STATE_READ_PROPERTY}'s file, or null. */
    private final Path holdStateRead;

    /**
     * @param bootstrap Kafka's bootstrap servers, {@code host:port[,host:port]}
     * @param settings the {@code --kafka-config} client settings of every consumer
     * @param topicPrefix the topics are {@code <prefix>.state} and {@code <prefix>.events}
     * @param feed the cache to feed
     * @param progress where to report progress
     * @param nodeId the node's id, for log lines and client ids
     * @param maxFeedStaleness once serving, how old the newest record (by its Kafka timestamp)
     *     may get before the feed is reported stale ({@link CacheFeed#feedStale}); 0 = never
     * @param preloadRecords the history window also gets the revisions of up to this many
     *     events-topic records before the state checkpoint (a node's {@code --history-max-events}),
     *     so that a node that just rebuilt resumes watches from before its start instead of
     *     answering 410; 0 for none
     */
    public KafkaCacheLoader(
            String bootstrap,
            KafkaClientSettings settings,
            String topicPrefix,
            CacheFeed feed,
            RebuildProgress progress,
            String nodeId,
            Duration maxFeedStaleness,
            int preloadRecords) {
        this.preloadRecords = preloadRecords;
        this.maxFeedStaleness = maxFeedStaleness;
        this.bootstrap = bootstrap;
        this.settings = settings;
        this.stateTopic = WatchFanoutSerdes.stateTopic(topicPrefix);
        this.eventsTopic = WatchFanoutSerdes.eventsTopic(topicPrefix);
        this.feed = feed;
        this.progress = progress;
        this.nodeId = nodeId;
        String hold = System.getProperty(HOLD_STATE_READ_PROPERTY);
        this.holdStateRead = hold == null || hold.isEmpty() ? null : Path.of(hold);
        this.thread = new Thread(this::run, "watchfanout-feed-" + nodeId);
        this.thread.setDaemon(true);
    }

    /** Notes where revisions start in the events topic into {@code h} while reading it; call before {@link #start}. */
    public void indexInto(KafkaHistory h) {
        this.olderHistory = h;
    }

    /** Starts the feed thread. */
    public void start() {
        thread.start();
    }

    /** Stops the feed thread and waits for it (at most 10 s; returns early if interrupted). */
    @Override
    public void close() {
        running = false;
        KafkaConsumer<byte[], ?> c = current;
        if (c != null) {
            c.wakeup();
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Properties props(Class<? extends Deserializer<?>> valueDeserializer, String role) {
        return consumerProps(bootstrap, settings, nodeId, role, valueDeserializer);
    }

    /**
     * How long a node's consumer waits for a broker's answer before it drops the connection and opens another
     * ({@code request.timeout.ms}, unless {@code --kafka-config} sets it). The ingester writes a record at least
     * every second and a fetch waits at most {@code fetch.max.wait.ms} (0.5 s) for one, so a fetch unanswered this
     * long is a dead connection (a network partition, a stopped broker). Kafka's default (30 s) left a node behind
     * a 15 s partition for another 10–15 s after it healed: the lost fetch is only resent when TCP's retransmission
     * backoff, doubled at every try, comes round again. A new connection needs none of that.
     */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

    /**
     * How long a new connection to a broker may take before the consumer gives it up and tries again
     * ({@code socket.connection.setup.timeout.ms}, and at most {@link #CONNECTION_SETUP_TIMEOUT_MAX} as it grows
     * after failures; Kafka's defaults are 10 s and 30 s): a SYN lost in a partition is resent after 1, 3, 7 s,
     * so a short setup timeout brings a fresh attempt soon after the network is back.
     */
    static final Duration CONNECTION_SETUP_TIMEOUT = Duration.ofSeconds(3);

    static final Duration CONNECTION_SETUP_TIMEOUT_MAX = Duration.ofSeconds(5);

    /**
     * The settings of every consumer of a node: {@code assign()}ed partitions (no group, no commits),
     * {@code read_committed}, no offset reset (a position that retention removed is an error to
     * report, never a silent jump), no topic creation; a dead connection given up after
     * {@link #REQUEST_TIMEOUT}; and the {@code --kafka-config} settings (which may set the timeouts).
     */
    static Properties consumerProps(
            String bootstrap,
            KafkaClientSettings settings,
            String nodeId,
            String role,
            Class<? extends Deserializer<?>> valueDeserializer) {
        Properties p = new Properties();
        settings.applyTo(p);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "watchfanout-" + nodeId + "-" + role);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, valueDeserializer.getName());
        p.putIfAbsent(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(REQUEST_TIMEOUT.toMillis()));
        p.putIfAbsent(
                ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG,
                Long.toString(CONNECTION_SETUP_TIMEOUT.toMillis()));
        p.putIfAbsent(
                ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG,
                Long.toString(CONNECTION_SETUP_TIMEOUT_MAX.toMillis()));
        return p;
    }

    private void run() {
        long start = System.nanoTime();
        try {
            Snapshot snapshot = null;
            for (int restarts = 0; snapshot == null && running; ) {
                try {
                    snapshot = readState();
                } catch (StateReadOutlived e) {
                    restarts++;
                    restarted(restarts, e.getMessage());
                }
            }
            if (snapshot == null) {
                return;
            }
            tailEvents(snapshot, start);
        } catch (WakeupException | InterruptException e) {
            if (running) {
                fail("the feed thread was interrupted: " + e);
            }
        } catch (RecordDeserializationException e) {
            fail("undecodable record in " + e.topicPartition() + " at offset " + e.offset() + ": "
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()));
        } catch (FeedException e) {
            fail(e.getMessage());
        } catch (KafkaException | IllegalStateException | IllegalArgumentException e) {
            fail("unexpected error while reading Kafka: " + e);
        } finally {
            current = null;
        }
    }

    /**
     * A read of the state topic was dropped ({@link StateScan}): count, log, tell {@code /readyz};
     * past {@link #QUIET_RESTARTS}, say that the rebuild cannot finish in time and pause before the
     * next read, so that a node that is too slow does not read the topic over and over at full speed.
     */
    private void restarted(int restarts, String why) {
        progress.rebuildRestarts = restarts;
        String problem;
        if (restarts <= QUIET_RESTARTS) {
            problem = "started over (" + restarts + (restarts == 1 ? " time" : " times") + ") because " + why;
            LOG.warn(
                    "[node {}] rebuild: dropped what was read and starts over ({} of {} tries before giving notice): {}",
                    nodeId,
                    restarts,
                    QUIET_RESTARTS,
                    why);
        } else {
            problem = "cannot finish in time: it started over " + restarts + " times; the last time, " + why
                    + ". Raise " + stateTopic + "'s delete.retention.ms above twice the time the read takes, or give"
                    + " this node the CPU and network to read faster; it reads again every "
                    + RESTART_PAUSE.toSeconds() + " s";
            LOG.error("[node {}] rebuild {}", nodeId, problem);
        }
        progress.phase = "restarting";
        feed.rebuildDelayed(problem);
        if (restarts > QUIET_RESTARTS) {
            sleepWhileRunning(RESTART_PAUSE);
        }
    }

    private void sleepWhileRunning(Duration d) {
        long until = System.nanoTime() + d.toNanos();
        try {
            while (running && System.nanoTime() < until) {
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    private void fail(String reason) {
        progress.phase = "failed";
        LOG.error("[node {}] CACHE FAILED, this node stops serving (not ready, /v1/* answer 503): {}", nodeId, reason);
        feed.fail(reason);
    }

    /** A checkpointed snapshot read from the state topic; checkpoint null = topic empty. */
    private record Snapshot(StateCheckpoint checkpoint, int keys) {}

    /**
     * Reads the state topic to its end offsets and loads what it holds into the feed.
     *
     * @return the snapshot, or null when the loader was stopped meanwhile
     * @throws StateReadOutlived when the read took too long to be trusted ({@link StateScan}):
     *     nothing was loaded, read again
     */
    private Snapshot readState() throws FeedException, StateReadOutlived {
        progress.phase = "state";
        ValueArena arena = new ValueArena();
        // The deserializer instances given here take the place of the classes named in the settings.
        Supplier<DeleteRetentionLookup> makeLookup =
                () -> new DeleteRetentionLookup(adminProps(), stateTopic, METADATA_TIMEOUT);
        try (EarlyRetention retention = new EarlyRetention(makeLookup, nodeId);
                KafkaConsumer<byte[], StateValue> consumer = new KafkaConsumer<>(
                        props(StateRecordDeserializer.class, "state"),
                        new ByteArrayDeserializer(),
                        new StateValueDeserializer(arena))) {
            current = consumer;
            List<TopicPartition> tps = waitForPartitions(consumer, stateTopic);
            if (tps == null) {
                return null;
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> begin =
                    retry(() -> consumer.beginningOffsets(tps, METADATA_TIMEOUT), "beginning offsets of " + stateTopic);
            Map<TopicPartition, Long> end =
                    retry(() -> consumer.endOffsets(tps, METADATA_TIMEOUT), "end offsets of " + stateTopic);
            if (begin == null || end == null) {
                return null;
            }
            long total = 0;
            for (TopicPartition tp : tps) {
                total += Math.max(0, end.get(tp) - begin.get(tp));
            }
            LOG.info(
                    "[node {}] reading {} ({} partitions, {} records up to the end offsets)",
                    nodeId,
                    stateTopic,
                    tps.size(),
                    total);
            // Every record in the order read; the sort below keeps the last of each key. Sized from the
            // offsets, so that a million records are not copied while the list grows.
            List<StateValue> read = new ArrayList<>((int) Math.min(total, 1 << 26));
            StateCheckpoint checkpoint = null;
            long records = 0;
            long lastLog = System.nanoTime();
            // Timed from right before the first fetch: the window in which a tombstone must not vanish.
            // The setting is learnt beside the read (EarlyRetention); until it is, no budget applies.
            StateScan scan = StateScan.begin(UNKNOWN_RETENTION);
            boolean retentionKnown = false;
            while (running && !caughtUp(consumer, tps, end)) {
                ConsumerRecords<byte[], StateValue> batch = consumer.poll(POLL);
                int before = read.size();
                for (ConsumerRecord<byte[], StateValue> r : batch) {
                    records++;
                    byte[] key = r.key();
                    if (key == null) {
                        throw new FeedException("state record without a key in " + r.topic() + "-" + r.partition()
                                + " at offset " + r.offset());
                    }
                    StateValue v = r.value();
                    if (key.length == 0) {
                        if (v != null && (v.other() == null || !v.other().hasCheckpoint())) {
                            throw new FeedException("the empty key of " + stateTopic + " at offset " + r.offset()
                                    + " holds a " + bodyCase(v) + " (expected: a StateCheckpoint)");
                        }
                        checkpoint = v == null ? null : v.other().getCheckpoint();
                    } else if (v == null) {
                        read.add(StateValue.deleted(key));
                    } else if (v.kv() == null) {
                        throw new FeedException("key " + KeyRange.printable(UnsafeByteOperations.unsafeWrap(key))
                                + " of " + stateTopic + " at offset " + r.offset() + " holds a " + bodyCase(v)
                                + " (expected: a KeyValue)");
                    } else if (!Arrays.equals(key, v.key())) {
                        throw new FeedException("key " + KeyRange.printable(UnsafeByteOperations.unsafeWrap(key))
                                + " of " + stateTopic + " at offset " + r.offset() + " holds the key-value of "
                                + KeyRange.printable(v.kv().getKey()));
                    } else {
                        read.add(v);
                    }
                }
                progress.stateRecords = records;
                progress.keysLoaded = read.size();
                progress.stateRatio = total == 0 ? 1 : Math.min(1, (double) records / total);
                if (holdStateRead != null && read.size() > before) {
                    holdWhileAsked();
                }
                if (!retentionKnown) {
                    Duration early = retention.firstIfKnown();
                    if (early != null) {
                        known(scan, early);
                        retentionKnown = true;
                    }
                }
                // Given up as soon as it is too late: what follows could not be trusted either.
                if (!scan.trustworthy()) {
                    throw new StateReadOutlived(scan.outlived(stateTopic, progress.stateRatio));
                }
                if (System.nanoTime() - lastLog > PROGRESS_LOG_NANOS) {
                    lastLog = System.nanoTime();
                    LOG.info(
                            "[node {}] rebuild: {} records read, {} % of {}",
                            nodeId, read.size(), Math.round(progress.stateRatio * 100), stateTopic);
                }
            }
            if (!running) {
                return null;
            }
            if (!retentionKnown) {
                Duration early = retention.first();
                if (early != null) {
                    known(scan, early);
                }
            }
            // Asked again: an operator who shortened the setting during the read is heeded.
            Duration now = learn(retention.lookup(makeLookup));
            if (now == null) {
                return null;
            }
            scan.retentionNow(now);
            if (!scan.trustworthy()) {
                throw new StateReadOutlived(scan.outlived(stateTopic, 1));
            }
            List<KeyValue> sorted = lastOfEachKey(read, arena);
            if (checkpoint == null && !sorted.isEmpty()) {
                throw new FeedException(stateTopic + " holds " + sorted.size()
                        + " keys but no checkpoint under the empty key: cannot tell their revision");
            }
            feed.loadState(sorted, arena);
            progress.stateRatio = 1;
            progress.keysLoaded = sorted.size();
            LOG.info(
                    "[node {}] rebuild: loaded {} keys from {} at revision {} (events from offset {})",
                    nodeId,
                    sorted.size(),
                    stateTopic,
                    checkpoint == null ? 0 : checkpoint.getRevision(),
                    checkpoint == null ? 0 : checkpoint.getEventsOffset());
            return new Snapshot(checkpoint, sorted.size());
        }
    }

    /** Applies the first answer about delete.retention.ms to the read under way, and tells it as learn() does. */
    private void known(StateScan scan, Duration retention) {
        note(retention);
        scan.retentionNow(retention);
    }

    /** The state topic's delete.retention.ms now (waiting for Kafka as other metadata calls do), or null when closed. */
    private Duration learn(DeleteRetentionLookup retention) {
        Duration d = retry(retention::get, "delete.retention.ms of " + stateTopic);
        if (d != null) {
            note(d);
        }
        return d;
    }

    private void note(Duration d) {
        if (d.toMillis() != progress.deleteRetentionMillis) {
            LOG.info(
                    "[node {}] {} has delete.retention.ms={}: a read of it must take less than {} ms to be trusted",
                    nodeId,
                    stateTopic,
                    d.toMillis(),
                    d.toMillis() / 2);
        }
        progress.deleteRetentionMillis = d.toMillis();
    }

    /** The test hook {@link #HOLD_STATE_READ_PROPERTY}: stands still while its file exists. */
    private void holdWhileAsked() {
        if (!Files.exists(holdStateRead)) {
            return;
        }
        LOG.info(
                "[node {}] rebuild: holding the read of {} while {} exists (test hook)",
                nodeId,
                stateTopic,
                holdStateRead);
        while (running && Files.exists(holdStateRead)) {
            sleepWhileRunning(Duration.ofMillis(50));
        }
        LOG.info("[node {}] rebuild: the read of {} goes on", nodeId, stateTopic);
    }

    /** The settings of the node's admin client: the {@code --kafka-config} settings, bootstrap servers, client id. */
    private Properties adminProps() {
        Properties p = new Properties();
        settings.applyTo(p);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "watchfanout-" + nodeId + "-admin");
        return p;
    }

    /**
     * The live key-values of the records read, sorted by key: of several records of a key (a state
     * topic not yet compacted) the last one read, none for a key whose last record is a tombstone.
     * The values left behind are released in the arena. Everything is fetched by now, so the sort
     * may have both cores (a stable merge sort: records of one key stay in the order read).
     */
    private static List<KeyValue> lastOfEachKey(List<StateValue> read, ValueArena arena) {
        StateValue[] byKey = read.toArray(new StateValue[0]);
        read.clear();
        Arrays.parallelSort(byKey, (a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
        List<KeyValue> sorted = new ArrayList<>(byKey.length);
        for (int i = 0; i < byKey.length; i++) {
            StateValue v = byKey[i];
            byKey[i] = null;
            boolean superseded = i + 1 < byKey.length && Arrays.equals(v.key(), byKey[i + 1].key());
            if (v.kv() == null) {
                continue;
            }
            if (superseded) {
                arena.release(v.kv().getValue());
            } else {
                sorted.add(v.kv());
            }
        }
        return sorted;
    }

    private static String bodyCase(StateValue v) {
        return v.other() != null ? v.other().getBodyCase().toString() : "KV";
    }

    private void tailEvents(Snapshot snapshot, long startNanos) throws FeedException {
        progress.phase = "events";
        try (KafkaConsumer<byte[], EventsRecord> consumer =
                new KafkaConsumer<>(props(EventsRecordDeserializer.class, "events"))) {
            current = consumer;
            List<TopicPartition> tps = waitForPartitions(consumer, eventsTopic);
            if (tps == null) {
                return;
            }
            if (tps.size() != 1) {
                throw new FeedException(
                        eventsTopic + " has " + tps.size() + " partitions (expected: 1, for total order)");
            }
            TopicPartition tp = tps.get(0);
            consumer.assign(tps);
            long startOffset =
                    snapshot.checkpoint() == null ? 0 : snapshot.checkpoint().getEventsOffset();
            Map<TopicPartition, Long> begin = retry(
                    () -> consumer.beginningOffsets(tps, METADATA_TIMEOUT), "beginning offsets of " + eventsTopic);
            Map<TopicPartition, Long> endMap =
                    retry(() -> consumer.endOffsets(tps, METADATA_TIMEOUT), "end offsets of " + eventsTopic);
            if (begin == null || endMap == null) {
                return;
            }
            if (begin.get(tp) > startOffset) {
                throw new FeedException(
                        eventsTopic + " starts at offset " + begin.get(tp) + ", after offset " + startOffset
                                + " that the state checkpoint needs (retention removed it): wait for the state topic to move on");
            }
            long end = endMap.get(tp);
            long revision =
                    snapshot.checkpoint() == null ? -1 : snapshot.checkpoint().getRevision();
            List<PreloadedRevision> history =
                    preload(consumer, tp, Math.max(begin.get(tp), startOffset - preloadRecords), startOffset);
            if (history == null) {
                return;
            }
            feed.startAt(Math.max(0, revision), history);
            consumer.seek(tp, startOffset);
            RecordApplier applier = new RecordApplier(feed, revision);
            KafkaHistory index = olderHistory;
            LOG.info(
                    "[node {}] tailing {} from offset {} (revision {}); ready at offset {}",
                    nodeId,
                    eventsTopic,
                    startOffset,
                    Math.max(0, revision),
                    end);
            boolean ready = false;
            boolean waitingForFirstRecord = false;
            // Looked up once: the metric object stays with the consumer and reads its current value.
            Metric connections = connectionCount(consumer);
            long lastLog = System.nanoTime();
            while (running) {
                ConsumerRecords<byte[], EventsRecord> batch = consumer.poll(POLL);
                for (ConsumerRecord<byte[], EventsRecord> r : batch) {
                    if (index != null && r.value() != null) {
                        index.noteRecord(r.value(), r.offset());
                    }
                    try {
                        applier.accept(r.value(), r.timestamp());
                    } catch (RevisionChainException e) {
                        throw new FeedException("revision chain broken in " + eventsTopic + " at offset " + r.offset()
                                + ": " + e.getMessage());
                    }
                    if (r.value().hasProgress() && r.value().getProgress().hasDigest()) {
                        digest(feed.checkDigest(r.value().getProgress().getDigest()), r.offset());
                    }
                    progress.newestRecordMillis = Math.max(progress.newestRecordMillis, r.timestamp());
                }
                long position = consumer.position(tp);
                progress.eventsRecords = applier.records();
                // Without a connection to a broker the lag is unknown, not the last value fetched.
                boolean connected =
                        connections == null || connections.metricValue() instanceof Number c && c.doubleValue() > 0;
                if (connected != kafkaConnected) {
                    kafkaConnected = connected;
                    if (connected) {
                        LOG.info("[node {}] Kafka at {} is back", nodeId, bootstrap);
                    } else {
                        LOG.warn("[node {}] lost Kafka at {}: no connection to any broker", nodeId, bootstrap);
                    }
                }
                progress.consumerLag = connected ? consumer.currentLag(tp).orElse(-1) : -1;
                feed.tick();
                if (ready) {
                    checkFreshness(applier.lastRevision());
                }
                if (!ready) {
                    progress.eventsRatio = end <= startOffset
                            ? 1
                            : Math.min(1, (double) (position - startOffset) / (end - startOffset));
                    if (position >= end && applier.lastRevision() < 0) {
                        // An events topic the ingester has never written to: an empty cache would
                        // answer every list and watch wrongly (etcd may hold keys and history).
                        if (!waitingForFirstRecord) {
                            waitingForFirstRecord = true;
                            feed.rebuildDelayed("waits for the ingester's first record: " + eventsTopic
                                    + " is empty (is the ingester running with --topic-prefix as this node?)");
                            // Last, so that whoever sees the phase also sees why the node is not ready.
                            progress.phase = "waiting for the ingester";
                            LOG.info(
                                    "[node {}] {} is empty: waiting for the ingester's first record",
                                    nodeId,
                                    eventsTopic);
                        }
                    } else if (position >= end) {
                        ready = true;
                        progress.eventsRatio = 1;
                        progress.rebuildSeconds = (System.nanoTime() - startNanos) / 1e9;
                        progress.phase = "serving";
                        feed.markReady();
                        LOG.info(
                                "[node {}] rebuild done in {} s: caught up with {} at offset {} (revision {}); ready",
                                nodeId,
                                String.format("%.2f", progress.rebuildSeconds),
                                eventsTopic,
                                position,
                                applier.lastRevision());
                    } else if (System.nanoTime() - lastLog > PROGRESS_LOG_NANOS) {
                        lastLog = System.nanoTime();
                        LOG.info(
                                "[node {}] rebuild: {} % of {} applied (offset {} of {})",
                                nodeId, Math.round(progress.eventsRatio * 100), eventsTopic, position, end);
                    }
                }
            }
        }
    }

    /**
     * Counts a digest's verdict; a state that differs from etcd's stops the node from serving
     * (docs/RELIABILITY.md, "Digests").
     */
    private void digest(DigestVerifier.Verdict verdict, long offset) throws FeedException {
        StateDigest d = verdict.digest();
        switch (verdict.outcome()) {
            case EQUAL -> {
                progress.digestsEqual++;
                progress.digestVerifiedRevision = d.getRevision();
                progress.digestVerifiedMillis = System.currentTimeMillis();
                LOG.debug(
                        "[node {}] equal to etcd's digest at revision {} ({} keys)",
                        nodeId,
                        d.getRevision(),
                        d.getKeyCount());
            }
            case TOO_OLD -> progress.digestsTooOld++;
            case DIFFERENT -> {
                progress.digestsDifferent++;
                throw new FeedException("this node's cache differs from etcd at revision " + d.getRevision()
                        + " (digest at offset " + offset + " of " + eventsTopic + "): " + verdict.actual()
                        + " where etcd has " + new StateHash(d.getHash(), d.getKeyCount()) + "; "
                        + feed.whereCacheDiffers(d)
                        + ". A record was lost or altered between etcd and this node, or the cache went wrong. Restart the node to rebuild "
                        + "it from Kafka; if the next digest differs again, the topics themselves differ from etcd");
            }
        }
    }

    /**
     * The complete revisions among the events-topic records in {@code [from, to)}: the history just
     * before the checkpoint. A revision cut by {@code from} is left out; a resync in the span drops
     * what came before it (that history is gone); progress records carry no events.
     *
     * @return the revisions in order, or null when the loader was stopped meanwhile
     */
    private List<PreloadedRevision> preload(
            KafkaConsumer<byte[], EventsRecord> consumer, TopicPartition tp, long from, long to) {
        List<PreloadedRevision> out = new ArrayList<>();
        if (from >= to) {
            return out;
        }
        consumer.seek(tp, from);
        List<Event> current = null;
        long currentTimestamp = 0;
        while (running) {
            ConsumerRecords<byte[], EventsRecord> batch = consumer.poll(POLL);
            for (ConsumerRecord<byte[], EventsRecord> r : batch) {
                if (r.offset() >= to) {
                    break;
                }
                EventsRecord v = r.value();
                if (olderHistory != null) {
                    olderHistory.noteRecord(v, r.offset());
                }
                if (v.hasResync() || v.hasEvent() && v.getEvent().getResync()) {
                    out.clear();
                    current = null;
                } else if (v.hasEvent()) {
                    Event e = v.getEvent();
                    if (current != null && current.get(0).getRevision() != e.getRevision()) {
                        // A revision that did not end where it should: keep only what follows.
                        out.clear();
                        current = null;
                    }
                    if (current == null && e.getIndex() == 0) {
                        current = new ArrayList<>(e.getCount());
                        currentTimestamp = r.timestamp();
                    }
                    if (current != null) {
                        current.add(e);
                        if (e.getIndex() == e.getCount() - 1) {
                            out.add(new PreloadedRevision(current, currentTimestamp));
                            current = null;
                        }
                    }
                }
            }
            if (consumer.position(tp) >= to) {
                LOG.info(
                        "[node {}] history: {} revisions from offsets {} to {} of {} before the checkpoint",
                        nodeId,
                        out.size(),
                        from,
                        to,
                        eventsTopic);
                return out;
            }
        }
        return null;
    }

    /** The consumer's {@code connection-count} metric (connections to brokers), or null when it has none. */
    private static Metric connectionCount(KafkaConsumer<byte[], ?> consumer) {
        for (Map.Entry<MetricName, ? extends Metric> m : consumer.metrics().entrySet()) {
            if (m.getKey().name().equals("connection-count")
                    && m.getKey().group().equals("consumer-metrics")) {
                return m.getValue();
            }
        }
        return null;
    }

    /**
     * Logs a stale feed once when it goes stale and once when records come again; while it stays
     * stale, the reason readiness gives is renewed at every check, so that it says how long the
     * outage has lasted so far.
     */
    private void checkFreshness(long revision) {
        if (maxFeedStaleness.isZero()) {
            return;
        }
        double staleness = progress.feedStalenessSeconds();
        boolean stale = !Double.isNaN(staleness) && staleness * 1000 > maxFeedStaleness.toMillis();
        if (stale) {
            String problem = "no record from the ingester for " + Math.round(staleness) + " s (--max-feed-staleness "
                    + maxFeedStaleness.toMillis() / 1000.0 + " s): the ingester, Kafka at " + bootstrap
                    + " or etcd stopped feeding this node; it serves revision " + revision + " meanwhile";
            if (!feedStale) {
                feedStale = true;
                LOG.warn("[node {}] feed is stale: {}", nodeId, problem);
            }
            feed.feedStale(problem);
        } else if (!stale && feedStale) {
            feedStale = false;
            LOG.info("[node {}] feed is fresh again: records from the ingester come in", nodeId);
            feed.feedStale(null);
        }
    }

    private static boolean caughtUp(
            KafkaConsumer<byte[], ?> consumer, List<TopicPartition> tps, Map<TopicPartition, Long> end) {
        for (TopicPartition tp : tps) {
            if (consumer.position(tp) < end.get(tp)) {
                return false;
            }
        }
        return true;
    }

    /** The topic's partitions, waiting (with backoff) for Kafka and for the topic; null when closed. */
    private List<TopicPartition> waitForPartitions(KafkaConsumer<byte[], ?> consumer, String topic) {
        List<PartitionInfo> infos = retry(
                () -> {
                    List<PartitionInfo> p = consumer.partitionsFor(topic, METADATA_TIMEOUT);
                    if (p == null || p.isEmpty()) {
                        throw new TimeoutException("topic " + topic + " does not exist yet");
                    }
                    return p;
                },
                "topic " + topic);
        if (infos == null) {
            return null;
        }
        List<TopicPartition> tps = new ArrayList<>();
        for (PartitionInfo i : infos) {
            tps.add(new TopicPartition(topic, i.partition()));
        }
        tps.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
        return tps;
    }

    /** Retries a metadata call on timeouts with exponential backoff; null when closed. */
    private <T> T retry(Supplier<T> call, String what) {
        long backoffMillis = 200;
        int attempt = 0;
        String phase = progress.phase;
        while (running) {
            try {
                T result = call.get();
                progress.phase = phase;
                if (attempt > 0) {
                    LOG.info(
                            "[node {}] Kafka at {} answered ({}) after {} attempts",
                            nodeId,
                            bootstrap,
                            what,
                            attempt + 1);
                }
                return result;
            } catch (TimeoutException e) {
                attempt++;
                progress.phase = "waiting for Kafka";
                if (attempt == 1 || attempt % 10 == 0) {
                    LOG.warn(
                            "[node {}] waiting for Kafka at {} ({}; attempt {}): {}",
                            nodeId,
                            bootstrap,
                            what,
                            attempt,
                            e.getMessage());
                }
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return null;
                }
                backoffMillis = Math.min(backoffMillis * 2, MAX_BACKOFF.toMillis());
            }
        }
        return null;
    }

    /** A read of the state topic that took too long to be trusted ({@link StateScan}); its message says why. */
    private static final class StateReadOutlived extends Exception {
        private static final long serialVersionUID = 1L;

        StateReadOutlived(String message) {
            super(message);
        }
    }

    /** Bad data: the feed stops for good. */
    private static final class FeedException extends Exception {
        private static final long serialVersionUID = 1L;

        FeedException(String message) {
            super(message);
        }
    }
}
