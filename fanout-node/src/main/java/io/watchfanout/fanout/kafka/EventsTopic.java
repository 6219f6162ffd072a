package io.watchfanout.fanout.kafka;

import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Finding revisions in the events topic (one partition, revisions non-decreasing by offset) with
 * a consumer of it: the record at an offset, the oldest cursor the topic still serves, and a
 * bounded binary search for where the events after a revision start.
 *
 * <p>Not thread-safe: each method uses the caller's consumer on the caller's thread.
 */
final class EventsTopic {
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(10);
    /** Below this many offsets the search stops and the read skips what it does not need. */
    static final long LINEAR_SPAN = 256;

    private EventsTopic() {}

    /**
     * The least revision R such that every record before this one has a revision below R, or -1 when
     * the record does not bound them (an event after the first of its revision, or a resync entry).
     * The first event of revision R and a resync record at R give R; a progress record at R gives
     * R + 1, as it follows the events of R itself (the ingester's heartbeat after the last write
     * repeats that write's revision), so a read of the events after R - 1 must not start at it.
     */
    static long revisionsBelow(EventsRecord r) {
        long rev = EventsRecords.revision(r);
        if (r.hasProgress()) {
            return rev + 1;
        }
        if (r.hasResync()) {
            return rev;
        }
        return r.hasEvent() && r.getEvent().getIndex() == 0 && !r.getEvent().getResync() ? rev : -1;
    }

    /**
     * The oldest cursor whose later events are all in the topic, judged by its first retained
     * record: a revision start at R serves cursors {@code >= R - 1} (for a progress or resync record,
     * {@code >= R}); a record inside a revision, cursors {@code >= R}.
     */
    static long floorOf(EventsRecord first) {
        long r = EventsRecords.revision(first);
        return first.hasEvent()
                        && first.getEvent().getIndex() == 0
                        && !first.getEvent().getResync()
                ? r - 1
                : r;
    }

    /** [beginning offset, end offset) of the partition. */
    static long[] bounds(KafkaConsumer<byte[], EventsRecord> consumer, TopicPartition tp) {
        Map<TopicPartition, Long> begin = consumer.beginningOffsets(List.of(tp), METADATA_TIMEOUT);
        Map<TopicPartition, Long> end = consumer.endOffsets(List.of(tp), METADATA_TIMEOUT);
        return new long[] {begin.get(tp), end.get(tp)};
    }

    /**
     * The first committed record at or after {@code offset}, or null when there is none before
     * {@code end} (only transaction markers or aborted records) or {@code running} turned false.
     *
     * @throws org.apache.kafka.common.errors.TimeoutException when no record comes for 10 s
     */
    static ConsumerRecord<byte[], EventsRecord> recordAt(
            KafkaConsumer<byte[], EventsRecord> consumer,
            TopicPartition tp,
            long offset,
            long end,
            BooleanSupplier running) {
        if (offset >= end) {
            return null;
        }
        consumer.seek(tp, offset);
        long deadline = System.nanoTime() + METADATA_TIMEOUT.toNanos();
        while (running.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new org.apache.kafka.common.errors.TimeoutException("no record from " + tp + " at offset "
                        + offset + " within " + METADATA_TIMEOUT.toSeconds() + " s");
            }
            ConsumerRecords<byte[], EventsRecord> batch = consumer.poll(POLL);
            for (ConsumerRecord<byte[], EventsRecord> r : batch) {
                if (r.offset() >= offset) {
                    return r.offset() < end ? r : null;
                }
            }
            if (consumer.position(tp) >= end) {
                return null;
            }
        }
        return null;
    }

    /**
     * An offset from which every event after {@code afterRevision} follows (the reader skips the
     * records at or before it), found by binary search over {@code [from, end)}: at most
     * {@code log2((end - from) / LINEAR_SPAN)} record fetches.
     *
     * @param from an offset whose records before it all have revisions {@code <= afterRevision}
     */
    static long startOffset(
            KafkaConsumer<byte[], EventsRecord> consumer,
            TopicPartition tp,
            long from,
            long end,
            long afterRevision,
            BooleanSupplier running) {
        long lo = from;
        long hi = end;
        while (hi - lo > LINEAR_SPAN && running.getAsBoolean()) {
            long mid = lo + (hi - lo) / 2;
            ConsumerRecord<byte[], EventsRecord> r = recordAt(consumer, tp, mid, hi, running);
            if (r != null && EventsRecords.revision(r.value()) <= afterRevision) {
                // Records before it have revisions <= its own; the ones between mid and it are markers.
                lo = r.offset();
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
