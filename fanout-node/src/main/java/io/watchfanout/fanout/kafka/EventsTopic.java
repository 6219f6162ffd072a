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
     * True when every record before this one has a smaller revision: the first event of a
     * revision, or a progress or resync record (each follows the whole of the revisions before it).
     */
    static boolean startsRevision(EventsRecord r) {
        return !r.hasEvent() || r.getEvent().getIndex() == 0 && !r.getEvent().getResync();
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
