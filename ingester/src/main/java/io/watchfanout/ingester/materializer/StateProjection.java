package io.watchfanout.ingester.materializer;

import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Maps each events-topic record to state-topic records: a PUT to the key's new
 * key-value, a DELETE to a tombstone, and — after the last event of a revision, a
 * progress record, or an empty resync — the checkpoint under the empty key with the
 * revision and the events-topic offset after the record. Checkpoints therefore never fall
 * inside a revision.
 *
 * <p>Stateless; one instance per stream task, driven by its stream thread.
 */
final class StateProjection implements Processor<byte[], EventsRecord, byte[], StateRecord> {
    private static final byte[] CHECKPOINT_KEY = new byte[0];

    private ProcessorContext<byte[], StateRecord> context;

    @Override
    public void init(ProcessorContext<byte[], StateRecord> context) {
        this.context = context;
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

    private void checkpoint(long revision, long timestamp) {
        long offset = context.recordMetadata()
                .map(RecordMetadata::offset)
                .orElseThrow(() -> new IllegalStateException("no offset for the current record"));
        StateRecord checkpoint = StateRecord.newBuilder()
                .setCheckpoint(
                        StateCheckpoint.newBuilder().setRevision(revision).setEventsOffset(offset + 1))
                .build();
        context.forward(new Record<>(CHECKPOINT_KEY, checkpoint, timestamp));
    }
}
