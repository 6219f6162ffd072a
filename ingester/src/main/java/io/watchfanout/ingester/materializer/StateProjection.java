package io.watchfanout.ingester.materializer;

import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.time.Duration;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Maps each events-topic record to state-topic records: a PUT to the key's new
 * key-value, a DELETE to a tombstone, and the checkpoint under the empty key with the
 * revision and the events-topic offset after the last revision boundary seen (the last event
 * of a revision, a progress record, or an empty resync). Checkpoints therefore never fall
 * inside a revision.
 *
 * <p>A checkpoint is written at most once per {@code checkpointInterval} of wall-clock time, not
 * after every revision: compaction keeps only the newest one anyway, and at one event per
 * revision a checkpoint per revision doubled the records the materializer writes. A boundary
 * at least an interval after the last checkpoint is checkpointed at once (so the first one, and
 * every one at a low rate, is, as before: a node refuses key-values without a checkpoint); one
 * sooner waits for the next punctuation or boundary. A checkpoint may lag the key-values
 * written before it (docs/ARCHITECTURE.md, invariant 4: a node re-applies the events after it,
 * which leaves the same state); it is never ahead of them, since it is forwarded after them in
 * the same or a later transaction.
 *
 * <p>One instance per stream task, driven by its stream thread; its only state is the pending
 * checkpoint.
 */
final class StateProjection implements Processor<byte[], EventsRecord, byte[], StateRecord> {
    private static final byte[] CHECKPOINT_KEY = new byte[0];

    private final Duration checkpointInterval;
    private ProcessorContext<byte[], StateRecord> context;
    /** The revision of the last boundary not yet checkpointed; -1 when there is none. */
    private long pendingRevision = -1;
    /** The events-topic offset after that boundary. */
    private long pendingOffset;
    /** The Kafka timestamp of the record at that boundary. */
    private long pendingTimestamp;
    /** When the last checkpoint was forwarded (the stream thread's wall clock, ms); none yet: MIN_VALUE. */
    private long lastCheckpointMillis = Long.MIN_VALUE;

    /** @param checkpointInterval how often the pending checkpoint is written (wall-clock), &gt; 0 */
    StateProjection(Duration checkpointInterval) {
        this.checkpointInterval = checkpointInterval;
    }

    @Override
    public void init(ProcessorContext<byte[], StateRecord> context) {
        this.context = context;
        context.schedule(checkpointInterval, PunctuationType.WALL_CLOCK_TIME, now -> writeCheckpoint());
    }

    @Override
    public void process(Record<byte[], EventsRecord> record) {
        EventsRecord value = record.value();
        switch (value.getBodyCase()) {
            case EVENT: {
                Event e = value.getEvent();
                byte[] key = e.getKv().getKey().toByteArray();
                StateRecord state = e.getType() == Event.Type.PUT
                        ? StateRecord.newBuilder().setKv(e.getKv()).build()
                        : null;
                context.forward(new Record<>(key, state, record.timestamp()));
                if (e.getIndex() == e.getCount() - 1) {
                    checkpoint(e.getRevision(), record.timestamp());
                }
                break;
            }
            case PROGRESS:
                checkpoint(value.getProgress().getRevision(), record.timestamp());
                break;
            case RESYNC:
                if (value.getResync().getEntryCount() == 0) {
                    checkpoint(value.getResync().getRevision(), record.timestamp());
                }
                break;
            default:
                throw new IllegalStateException("events record without a known body at offset "
                        + context.recordMetadata().map(RecordMetadata::offset).orElse(-1L));
        }
    }

    /** Marks the current record as a revision boundary: the next checkpoint covers it. */
    private void checkpoint(long revision, long timestamp) {
        pendingOffset = context.recordMetadata()
                        .map(RecordMetadata::offset)
                        .orElseThrow(() -> new IllegalStateException("no offset for the current record"))
                + 1;
        pendingRevision = revision;
        pendingTimestamp = timestamp;
        if (lastCheckpointMillis == Long.MIN_VALUE
                || context.currentSystemTimeMs() - lastCheckpointMillis >= checkpointInterval.toMillis()) {
            writeCheckpoint();
        }
    }

    private void writeCheckpoint() {
        if (pendingRevision < 0) {
            return;
        }
        StateRecord checkpoint = StateRecord.newBuilder()
                .setCheckpoint(StateCheckpoint.newBuilder()
                        .setRevision(pendingRevision)
                        .setEventsOffset(pendingOffset))
                .build();
        context.forward(new Record<>(CHECKPOINT_KEY, checkpoint, pendingTimestamp));
        pendingRevision = -1;
        lastCheckpointMillis = context.currentSystemTimeMs();
    }
}
