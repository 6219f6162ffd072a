package io.watchfanout.schema;

import io.watchfanout.schema.v1.EventsRecord;

/** Accessors common to every kind of events-topic record. Stateless. */
public final class EventsRecords {
    private EventsRecords() {}

    /**
     * The etcd revision a record belongs to.
     *
     * @throws IllegalArgumentException for a record without a body
     */
    public static long revision(EventsRecord record) {
        switch (record.getBodyCase()) {
            case EVENT:
                return record.getEvent().getRevision();
            case PROGRESS:
                return record.getProgress().getRevision();
            case RESYNC:
                return record.getResync().getRevision();
            default:
                throw new IllegalArgumentException("events record without a body");
        }
    }
}
