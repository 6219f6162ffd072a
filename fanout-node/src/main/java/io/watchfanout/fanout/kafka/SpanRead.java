package io.watchfanout.fanout.kafka;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.watch.OlderHistory;
import io.watchfanout.fanout.watch.OlderHistory.Step;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One read of the events topic from a revision older than the history window up to the window,
 * shared by every cursor that joins it: its own consumer on its own thread fetches and decodes
 * each record once, assembles whole revisions into {@link CachedEvent}s (whose frames are then
 * built once per encoding for all its cursors) and holds them until every cursor has passed them
 * and the read holds more than its byte bound; a cursor that joins later starts anywhere in
 * what is still held. The read ends at the first revision boundary at or after the window's
 * start. When it holds its byte bound and its slowest cursor still needs the oldest revision, it
 * waits: a slow reader slows the readers of its span, never the node's memory.
 *
 * <p>Thread-safety: the held revisions, the cursors and the state are guarded by this object's
 * monitor; the consumer belongs to the read's thread.
 */
final class SpanRead implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SpanRead.class);
    private static final Duration POLL = Duration.ofMillis(200);
    /** A read that gets no record for this long while it needs some gives up (Kafka unreachable). */
    private static final long STUCK_NANOS = Duration.ofSeconds(30).toNanos();

    /** One whole revision (or a progress or resync record) as held. */
    private record Item(long revision, List<CachedEvent> events, boolean resync, long bytes) {}

    private final KafkaHistory history;
    private final long afterRevision;
    private final long id;
    private volatile boolean running = true;

    /**
     * The held revisions are {@code items[head ..]}: trimming advances {@code head} and compacts now
     * and then, as removing the first of tens of thousands of held items one at a time copied the
     * whole list for every record read.
     */
    private final ArrayList<Item> items = new ArrayList<>();

    private int head;
    /** The absolute position of items.get(head). */
    private long base;
    /** The revision of the last item dropped (or the read's start): cursors at or after it may join. */
    private long trimmedTo;
    /** The revision of the last item read (or the read's start). */
    private long readTo;

    private long bytes;
    private boolean done;
    private Step failure;
    private final List<Position> cursors = new ArrayList<>();
    private final List<Runnable> waiters = new ArrayList<>();
    private long idleSinceNanos = System.nanoTime();

    SpanRead(KafkaHistory history, long afterRevision, long id) {
        this.history = history;
        this.afterRevision = afterRevision;
        this.trimmedTo = afterRevision;
        this.readTo = afterRevision;
        this.id = id;
    }

    long afterRevision() {
        return afterRevision;
    }

    /** Whether a cursor at {@code after} can be served by this read from what it holds or will read. */
    synchronized boolean canJoin(long after) {
        return failure == null && running && after >= trimmedTo && (!done || after < readTo);
    }

    /** Attaches a cursor after {@code after}; the caller checked {@link #canJoin}. */
    synchronized OlderHistory.Cursor join(long after) {
        int lo = 0;
        int hi = items.size() - head;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (items.get(head + mid).revision() <= after) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Position p = new Position(base + lo, after);
        cursors.add(p);
        return p;
    }

    /** True when nobody reads from it and it is over, or it has been idle since {@code idleBeforeNanos}. */
    synchronized boolean isIdle(long idleBeforeNanos) {
        return cursors.isEmpty() && (failure != null || done && idleSinceNanos - idleBeforeNanos < 0);
    }

    /** True while its thread reads or a cursor is attached. */
    synchronized boolean isBusy() {
        return !cursors.isEmpty() || !done && failure == null;
    }

    /** Bytes of events held. */
    synchronized long bytes() {
        return bytes;
    }

    /** Stops the read and drops what it holds; its cursors get {@link Step.Kind#FAILED}. */
    void stop(String why) {
        running = false;
        fail(Step.failed(why));
    }

    // ---- the read's thread ------------------------------------------------------------

    @Override
    public void run() {
        try (KafkaConsumer<byte[], EventsRecord> consumer = history.newConsumer("older-" + id)) {
            TopicPartition tp = history.partition();
            consumer.assign(List.of(tp));
            long from = -1;
            long deadline = System.nanoTime() + STUCK_NANOS;
            while (from < 0) {
                try {
                    from = findStart(consumer, tp);
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    // Kafka is away (a broker restarting, a leader moving): look again until the read's bound.
                    if (!running || System.nanoTime() - deadline > 0) {
                        fail(Step.failed("Kafka did not answer for " + STUCK_NANOS / 1_000_000_000
                                + " s while this read " + "looked for revision " + afterRevision
                                + " in the events topic; retry, here or on another node"));
                        return;
                    }
                }
                if (from == -2) {
                    return;
                }
            }
            LOG.debug(
                    "[node {}] reading older history after revision {} from offset {} of {}",
                    history.nodeId(),
                    afterRevision,
                    from,
                    tp);
            consumer.seek(tp, from);
            read(consumer, tp);
        } catch (OffsetOutOfRangeException e) {
            fail(Step.expired("retention removed the events after revision " + readTo + " while they were read"));
        } catch (WakeupException | InterruptException e) {
            fail(Step.failed("the read of older history was stopped"));
        } catch (RecordDeserializationException e) {
            fail(Step.failed("undecodable record in " + e.topicPartition() + " at offset " + e.offset()));
        } catch (KafkaException | IllegalStateException | IllegalArgumentException e) {
            LOG.warn(
                    "[node {}] read of older history after revision {} failed: {}",
                    history.nodeId(),
                    afterRevision,
                    e.toString());
            fail(Step.failed("reading the events topic failed: " + e.getMessage()));
        }
    }

    /**
     * Where the events after {@code afterRevision} start in the topic, or -2 when the read ended
     * (its revision is no longer retained, or it was stopped).
     *
     * @throws org.apache.kafka.common.errors.TimeoutException when Kafka does not answer
     */
    private long findStart(KafkaConsumer<byte[], EventsRecord> consumer, TopicPartition tp) {
        long[] bounds = EventsTopic.bounds(consumer, tp);
        ConsumerRecord<byte[], EventsRecord> first =
                EventsTopic.recordAt(consumer, tp, bounds[0], bounds[1], () -> running);
        if (first == null) {
            fail(Step.expired("the events topic holds no record (after offset " + bounds[0] + ")"));
            return -2;
        }
        long floor = EventsTopic.floorOf(first.value());
        history.floorSeen(floor);
        if (afterRevision < floor) {
            fail(Step.expired("too old resource version: " + afterRevision + " (the events topic's oldest retained "
                    + "record serves from revision " + floor + ")"));
            return -2;
        }
        long hint = history.index().startOffset(afterRevision);
        long from = hint >= bounds[0]
                ? hint
                : EventsTopic.startOffset(consumer, tp, bounds[0], bounds[1], afterRevision, () -> running);
        return running ? from : -2;
    }

    private void read(KafkaConsumer<byte[], EventsRecord> consumer, TopicPartition tp) {
        List<Event> current = null;
        long currentTimestamp = 0;
        long currentBytes = 0;
        long lastRecordNanos = System.nanoTime();
        while (running) {
            ConsumerRecords<byte[], EventsRecord> batch = consumer.poll(POLL);
            if (!batch.isEmpty()) {
                lastRecordNanos = System.nanoTime();
            } else if (System.nanoTime() - lastRecordNanos > STUCK_NANOS) {
                fail(Step.failed("no record from the events topic for " + STUCK_NANOS / 1_000_000_000
                        + " s while reading " + "older history (Kafka unreachable?)"));
                return;
            }
            for (ConsumerRecord<byte[], EventsRecord> r : batch) {
                if (current == null && finishedAtWindow()) {
                    return;
                }
                EventsRecord v = r.value();
                long rev = EventsRecords.revision(v);
                if (rev <= afterRevision) {
                    continue;
                }
                history.recordsRead(1);
                if (v.hasResync()) {
                    append(new Item(rev, List.of(), true, 0));
                } else if (v.hasProgress()) {
                    append(new Item(rev, List.of(), false, 0));
                } else if (!v.getEvent().getResync()) {
                    Event e = v.getEvent();
                    if (current == null) {
                        if (e.getIndex() != 0) {
                            fail(Step.failed("the events topic has revision " + rev + " from index " + e.getIndex()
                                    + " at offset " + r.offset() + " (expected: 0)"));
                            return;
                        }
                        current = new ArrayList<>(e.getCount());
                        currentTimestamp = r.timestamp();
                        currentBytes = 0;
                    }
                    current.add(e);
                    currentBytes += e.getSerializedSize();
                    if (e.getIndex() == e.getCount() - 1) {
                        List<CachedEvent> cached = new ArrayList<>(current.size());
                        for (Event each : current) {
                            cached.add(new CachedEvent(each, currentTimestamp));
                        }
                        history.eventsRead(cached.size());
                        append(new Item(rev, cached, false, currentBytes));
                        current = null;
                    }
                }
                if (!running) {
                    return;
                }
            }
            if (current == null && finishedAtWindow()) {
                return;
            }
        }
    }

    /**
     * Ends the read once it has reached the window's start: a cursor there continues from the window,
     * so reading on would only build a second copy of the window's events.
     */
    private boolean finishedAtWindow() {
        long to = readTo();
        if (to < history.windowStart()) {
            return false;
        }
        synchronized (this) {
            done = true;
            idleSinceNanos = System.nanoTime();
        }
        wakeWaiters();
        LOG.debug(
                "[node {}] older history after revision {} read up to revision {}",
                history.nodeId(),
                afterRevision,
                to);
        return true;
    }

    private synchronized long readTo() {
        return readTo;
    }

    private void append(Item item) {
        synchronized (this) {
            if (failure != null) {
                running = false;
                return;
            }
            items.add(item);
            bytes += item.bytes();
            readTo = item.revision();
        }
        wakeWaiters();
        synchronized (this) {
            trimLocked();
            while (running
                    && failure == null
                    && bytes > history.maxBytesPerRead()
                    && !cursors.isEmpty()
                    && cursors.stream().anyMatch(c -> c.position == base)) {
                try {
                    wait(500);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    running = false;
                    return;
                }
                trimLocked();
            }
        }
    }

    private void fail(Step step) {
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = step;
            for (int i = head; i < items.size(); i++) {
                release(items.get(i));
            }
            items.clear();
            head = 0;
            bytes = 0;
            notifyAll();
        }
        wakeWaiters();
    }

    private void wakeWaiters() {
        List<Runnable> wake;
        synchronized (this) {
            if (waiters.isEmpty()) {
                return;
            }
            wake = new ArrayList<>(waiters);
            waiters.clear();
        }
        for (Runnable r : wake) {
            r.run();
        }
    }

    /** Drops the oldest revisions that no cursor needs while the read holds more than its bound. */
    private void trimLocked() {
        while (head < items.size() && bytes > history.maxBytesPerRead()) {
            for (Position c : cursors) {
                if (c.position <= base) {
                    return;
                }
            }
            Item i = items.set(head++, null);
            release(i);
            bytes -= i.bytes();
            trimmedTo = i.revision();
            base++;
            if (head >= 1024 && head * 2 >= items.size()) {
                items.subList(0, head).clear();
                head = 0;
            }
        }
    }

    private static void release(Item i) {
        for (CachedEvent e : i.events()) {
            e.release();
        }
    }

    /** A cursor in this read. */
    private final class Position implements OlderHistory.Cursor {
        long position;
        long revision;
        boolean closed;

        Position(long position, long revision) {
            this.position = position;
            this.revision = revision;
        }

        @Override
        public Step next(KeyRange range, int maxEvents, int maxScan, Runnable wake) {
            synchronized (SpanRead.this) {
                if (failure != null) {
                    return failure;
                }
                if (closed) {
                    return Step.failed("cursor closed");
                }
                List<CachedEvent> out = new ArrayList<>();
                int scanned = 0;
                int i = (int) (position - base);
                long cursor = -1;
                while (i < items.size() - head) {
                    Item item = items.get(head + i);
                    if (item.revision() <= revision) {
                        // Joined before the read got this far: what precedes the cursor is not for it.
                        i++;
                        position = base + i;
                        continue;
                    }
                    if (item.resync()) {
                        return Step.expired(
                                "the history after revision " + revision + " is gone: the ingester resynchronised "
                                        + "at revision " + item.revision() + " (etcd compacted it)");
                    }
                    for (CachedEvent e : item.events()) {
                        scanned++;
                        if (range.contains(e.key())) {
                            out.add(e);
                        }
                    }
                    cursor = item.revision();
                    i++;
                    if (out.size() >= maxEvents || scanned >= maxScan) {
                        break;
                    }
                }
                if (cursor >= 0) {
                    position = base + i;
                    revision = cursor;
                    trimLocked();
                    SpanRead.this.notifyAll();
                    return Step.events(out, cursor);
                }
                if (done) {
                    return Step.end(Math.max(revision, readTo));
                }
                waiters.add(wake);
                return Step.waiting();
            }
        }

        @Override
        public void close() {
            synchronized (SpanRead.this) {
                if (closed) {
                    return;
                }
                closed = true;
                cursors.remove(this);
                if (cursors.isEmpty()) {
                    idleSinceNanos = System.nanoTime();
                }
                trimLocked();
                SpanRead.this.notifyAll();
            }
        }
    }
}
