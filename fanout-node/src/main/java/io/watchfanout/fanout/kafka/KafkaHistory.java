package io.watchfanout.fanout.kafka;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.fanout.watch.HistoryExpiredException;
import io.watchfanout.fanout.watch.OlderHistory;
import io.watchfanout.fanout.watch.TooManyReadsException;
import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events topic as the node's history beyond its window ({@link OlderHistory}): watches from a
 * revision older than the window but still retained by Kafka are served by {@link SpanRead}s, each
 * a shared read of the topic from that revision up to the window. Where a read starts comes from a
 * revision→offset index that the feed thread fills while tailing ({@link #noteRecord}), and for
 * revisions before it from a bounded binary search of the topic. It also knows the topic's floor
 * (the oldest cursor its first retained record serves, checked every {@link #FLOOR_REFRESH}) and
 * turns times into revisions through Kafka's time index ({@link #revisionAt}).
 *
 * <p>Bounds: at most {@code maxReads} reads hold events at once, each at most
 * {@code maxBytesPerRead} bytes of events (their frames, built once per encoding in use, come on
 * top); a watch that needs one more gets {@link TooManyReadsException}. A read that nobody uses is
 * kept for {@code linger} so that watchers resuming from the same revision a moment later join it.
 *
 * <p>Thread-safety: every public method may be called from any thread; {@link #noteRecord} only
 * from the feed thread.
 */
public final class KafkaHistory implements OlderHistory, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaHistory.class);
    /** How often the topic's floor is checked (retention deletes whole segments, minutes apart). */
    static final Duration FLOOR_REFRESH = Duration.ofSeconds(10);

    private static final long INDEX_SPACING = 1000;
    /** How long a time resolved to a revision is remembered for other watchers from the same time. */
    private static final Duration RESOLVED_KEPT = Duration.ofSeconds(10);

    private final String bootstrap;
    private final KafkaClientSettings settings;
    private final String nodeId;
    private final TopicPartition partition;
    private final LongSupplier windowStart;
    private final int maxReads;
    private final long maxBytesPerRead;
    private final long lingerNanos;
    private final RevisionOffsets index = new RevisionOffsets(INDEX_SPACING, 1 << 16);
    private final ScheduledExecutorService probe;
    private final AtomicLong ids = new AtomicLong();
    private final ConcurrentHashMap<Instant, CompletableFuture<Long>> resolved = new ConcurrentHashMap<>();
    /** Guarded by this. */
    private final List<SpanRead> reads = new ArrayList<>();

    private volatile long floor = Long.MAX_VALUE;
    /** The newest resync the node has read in the topic: no history reaches across it. */
    private volatile long resyncFloor;

    private volatile boolean closed;
    /** The probe thread's consumer. */
    private KafkaConsumer<byte[], EventsRecord> probeConsumer;
    /** Feed thread only. */
    private long nextNoteOffset;

    private final LongAdder readsStarted = new LongAdder();
    private final LongAdder recordsRead = new LongAdder();
    private final LongAdder eventsRead = new LongAdder();

    /**
     * @param bootstrap Kafka's bootstrap servers
     * @param settings the {@code --kafka-config} client settings of every consumer
     * @param topicPrefix the events topic is {@code <prefix>.events} (one partition)
     * @param nodeId for log lines and client ids
     * @param windowStart the history window's start revision ({@code WatchCore::historyStartRevision}):
     *     a read ends once it reaches it
     * @param maxReads reads holding events at once, {@code >= 1}
     * @param maxBytesPerRead bytes of events a read holds at most, {@code >= 1}
     * @param linger how long an unused finished read stays joinable, {@code >= 0}
     */
    public KafkaHistory(
            String bootstrap,
            KafkaClientSettings settings,
            String topicPrefix,
            String nodeId,
            LongSupplier windowStart,
            int maxReads,
            long maxBytesPerRead,
            Duration linger) {
        if (maxReads < 1 || maxBytesPerRead < 1) {
            throw new IllegalArgumentException("maxReads " + maxReads + ", maxBytesPerRead " + maxBytesPerRead);
        }
        this.bootstrap = bootstrap;
        this.settings = settings;
        this.nodeId = nodeId;
        this.partition = new TopicPartition(WatchFanoutSerdes.eventsTopic(topicPrefix), 0);
        this.windowStart = windowStart;
        this.maxReads = maxReads;
        this.maxBytesPerRead = maxBytesPerRead;
        this.lingerNanos = linger.toNanos();
        this.probe = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "watchfanout-history-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts checking the topic's floor. */
    public void start() {
        probe.scheduleWithFixedDelay(this::refreshFloor, 0, FLOOR_REFRESH.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        closed = true;
        List<SpanRead> all;
        synchronized (this) {
            all = new ArrayList<>(reads);
            reads.clear();
        }
        for (SpanRead r : all) {
            r.stop("the node is stopping");
        }
        probe.execute(() -> {
            if (probeConsumer != null) {
                probeConsumer.close();
            }
        });
        probe.shutdown();
        try {
            probe.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- OlderHistory -----------------------------------------------------------------

    @Override
    public long floorRevision() {
        long f = floor;
        return f == Long.MAX_VALUE ? f : Math.max(f, resyncFloor);
    }

    @Override
    public synchronized boolean canOpen(long afterRevision) {
        prune();
        return !closed && joinable(afterRevision) != null || reads.size() < maxReads || evictableIdle() != null;
    }

    @Override
    public synchronized Cursor open(long afterRevision) throws TooManyReadsException {
        if (closed) {
            throw new TooManyReadsException("the node is stopping");
        }
        prune();
        SpanRead join = joinable(afterRevision);
        if (join != null) {
            return join.join(afterRevision);
        }
        if (reads.size() >= maxReads) {
            SpanRead idle = evictableIdle();
            if (idle == null) {
                throw new TooManyReadsException("this node already runs " + maxReads + " reads of older history "
                        + "(--deep-read-max-readers); retry later or on another node");
            }
            reads.remove(idle);
            idle.stop("evicted for a new read");
        }
        SpanRead read = new SpanRead(this, afterRevision, ids.incrementAndGet());
        Cursor c = read.join(afterRevision);
        reads.add(read);
        readsStarted.increment();
        Thread t = new Thread(read, "watchfanout-older-" + nodeId + "-" + afterRevision);
        t.setDaemon(true);
        t.start();
        return c;
    }

    private SpanRead joinable(long afterRevision) {
        SpanRead best = null;
        for (SpanRead r : reads) {
            if (r.canJoin(afterRevision) && (best == null || r.afterRevision() > best.afterRevision())) {
                best = r;
            }
        }
        return best;
    }

    private SpanRead evictableIdle() {
        for (SpanRead r : reads) {
            if (!r.isBusy()) {
                return r;
            }
        }
        return null;
    }

    private void prune() {
        long idleBefore = System.nanoTime() - lingerNanos;
        reads.removeIf(r -> r.isIdle(idleBefore));
    }

    // ---- counters ---------------------------------------------------------------------

    /** Reads of older history started (each a Kafka read of one span). */
    public long readsStarted() {
        return readsStarted.sum();
    }

    /** Events-topic records fetched by reads of older history. */
    public long recordsRead() {
        return recordsRead.sum();
    }

    /** Events decoded by reads of older history (once per read, whatever the number of its readers). */
    public long eventsRead() {
        return eventsRead.sum();
    }

    /** Reads holding events now (running, attached or lingering). */
    public synchronized int readsHeld() {
        prune();
        return reads.size();
    }

    /** Bytes of events the reads hold now. */
    public synchronized long bytesHeld() {
        long n = 0;
        for (SpanRead r : reads) {
            n += r.bytes();
        }
        return n;
    }

    // ---- the feed thread --------------------------------------------------------------

    /** Notes where revisions start while the feed tails or preloads the topic (feed thread only). */
    public void noteRecord(EventsRecord record, long offset) {
        if (record.hasResync()) {
            resyncFloor = Math.max(resyncFloor, record.getResync().getRevision());
        }
        long below = offset >= nextNoteOffset ? EventsTopic.revisionsBelow(record) : -1;
        if (below >= 0) {
            index.note(below, offset);
            nextNoteOffset = offset + INDEX_SPACING;
        }
    }

    // ---- times ------------------------------------------------------------------------

    /**
     * The cursor of a watch from {@code time}: the revision before the first revision whose records
     * Kafka stamped at or after it ({@code sinceTime}), found with the topic's time index.
     *
     * @return a future of the cursor, or of -1 when no record is that recent (watch from now); it
     *     fails with {@link HistoryExpiredException} for a time before the oldest retained record
     */
    @Override
    public CompletableFuture<Long> revisionAt(Instant time) {
        // Watchers resuming from one time (a tier's clients after an outage) share one lookup, and so
        // arrive at the read of their span together instead of one lookup apart.
        CompletableFuture<Long> shared = resolved.computeIfAbsent(time, this::lookUp);
        shared.whenComplete((cursor, error) -> {
            if (error != null || cursor < 0) {
                // "Nothing that recent" is true only now; a failure may not last.
                resolved.remove(time, shared);
            } else {
                try {
                    probe.schedule(
                            () -> resolved.remove(time, shared), RESOLVED_KEPT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    resolved.remove(time, shared);
                }
            }
        });
        return shared;
    }

    private CompletableFuture<Long> lookUp(Instant time) {
        CompletableFuture<Long> f = new CompletableFuture<>();
        try {
            probe.execute(() -> {
                try {
                    f.complete(resolve(time));
                } catch (HistoryExpiredException e) {
                    f.completeExceptionally(e);
                } catch (RuntimeException e) {
                    f.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(e);
        }
        return f;
    }

    private long resolve(Instant time) throws HistoryExpiredException {
        KafkaConsumer<byte[], EventsRecord> c = probeConsumer();
        long[] bounds = EventsTopic.bounds(c, partition);
        ConsumerRecord<byte[], EventsRecord> first =
                EventsTopic.recordAt(c, partition, bounds[0], bounds[1], () -> !closed);
        if (first == null) {
            return -1;
        }
        if (first.timestamp() > time.toEpochMilli()) {
            long floorRev = EventsTopic.floorOf(first.value());
            throw new HistoryExpiredException(
                    "too old a time: " + time + " (the events topic's oldest retained record is "
                            + "from " + Instant.ofEpochMilli(first.timestamp()) + ", revision "
                            + EventsRecords.revision(first.value())
                            + "; list again)",
                    floorRev,
                    floorRev);
        }
        Map<TopicPartition, OffsetAndTimestamp> found =
                c.offsetsForTimes(Map.of(partition, time.toEpochMilli()), Duration.ofSeconds(10));
        OffsetAndTimestamp at = found.get(partition);
        if (at == null) {
            return -1;
        }
        ConsumerRecord<byte[], EventsRecord> r =
                EventsTopic.recordAt(c, partition, at.offset(), bounds[1], () -> !closed);
        if (r == null) {
            return -1;
        }
        long rev = EventsRecords.revision(r.value());
        // A revision whose first record is at or after the time is in; one that began before it is not.
        return r.value().hasEvent() && EventsTopic.revisionsBelow(r.value()) == rev ? rev - 1 : rev;
    }

    private void refreshFloor() {
        try {
            KafkaConsumer<byte[], EventsRecord> c = probeConsumer();
            long[] bounds = EventsTopic.bounds(c, partition);
            ConsumerRecord<byte[], EventsRecord> first =
                    EventsTopic.recordAt(c, partition, bounds[0], bounds[1], () -> !closed);
            if (first != null) {
                long f = EventsTopic.floorOf(first.value());
                if (f != floor) {
                    LOG.info(
                            "[node {}] the events topic serves watches from revision {} on (first record at offset {})",
                            nodeId,
                            f,
                            first.offset());
                }
                floor = f;
            }
        } catch (KafkaException | IllegalStateException e) {
            LOG.debug("[node {}] could not check the events topic's oldest record: {}", nodeId, e.toString());
        } catch (RuntimeException e) {
            // Anything else too: a task of scheduleWithFixedDelay that throws is never run again, and the
            // floor would stay unknown for the node's life.
            LOG.warn("[node {}] could not check the events topic's oldest record: {}", nodeId, e.toString());
        }
    }

    private KafkaConsumer<byte[], EventsRecord> probeConsumer() {
        if (probeConsumer == null) {
            Properties p = KafkaCacheLoader.consumerProps(
                    bootstrap, settings, nodeId, "history", EventsRecordDeserializer.class);
            // The probe reads one record per seek (the topic's first, a sinceTime's first): with the
            // defaults every seek fetched up to 1 MiB and decoded up to 500 records, twice per
            // sinceTime, paid again by each of W watchers resuming from the same time.
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1");
            p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(64 * 1024));
            probeConsumer = new KafkaConsumer<>(p);
            probeConsumer.assign(List.of(partition));
        }
        return probeConsumer;
    }

    // ---- for SpanRead -----------------------------------------------------------------

    KafkaConsumer<byte[], EventsRecord> newConsumer(String role) {
        return new KafkaConsumer<>(
                KafkaCacheLoader.consumerProps(bootstrap, settings, nodeId, role, EventsRecordDeserializer.class));
    }

    TopicPartition partition() {
        return partition;
    }

    RevisionOffsets index() {
        return index;
    }

    String nodeId() {
        return nodeId;
    }

    long windowStart() {
        return windowStart.getAsLong();
    }

    long maxBytesPerRead() {
        return maxBytesPerRead;
    }

    void floorSeen(long f) {
        floor = f;
    }

    void recordsRead(long n) {
        recordsRead.add(n);
    }

    void eventsRead(long n) {
        eventsRead.add(n);
    }
}
