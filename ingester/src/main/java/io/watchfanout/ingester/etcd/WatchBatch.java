package io.watchfanout.ingester.etcd;

import io.watchfanout.schema.v1.Event;
import java.util.List;

/**
 * One etcd watch response, converted on the publisher thread: its events in etcd order
 * (each with type, kv, prev_kv and revision set; chain fields unset), or none for a
 * progress notification.
 *
 * @param headerRevision the store revision in the response header
 * @param progressNotify true for etcd's progress notification (a response with no events)
 * @param events the events in etcd order, possibly of several revisions
 * @param approximateBytes the size of keys and values held, for the hand-off queue's bound
 * @param receivedAtMillis when the response arrived from etcd (epoch milliseconds; 0 when
 *     unknown): the timestamp of its records in Kafka
 */
public record WatchBatch(
        long headerRevision, boolean progressNotify, List<Event> events, long approximateBytes, long receivedAtMillis) {

    /** A batch whose arrival time is unknown (tests). */
    public WatchBatch(long headerRevision, boolean progressNotify, List<Event> events, long approximateBytes) {
        this(headerRevision, progressNotify, events, approximateBytes, 0);
    }
}
