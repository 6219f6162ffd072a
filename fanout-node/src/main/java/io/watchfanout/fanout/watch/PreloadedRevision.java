package io.watchfanout.fanout.watch;

import io.watchfanout.schema.v1.Event;
import java.util.List;

/**
 * One complete revision read from the events topic before the state checkpoint, for the history
 * window of a node that just rebuilt (its state already holds the revision's effect).
 *
 * @param events the revision's events, index {@code 0..count-1}
 * @param timestampMillis its records' Kafka timestamp (when the ingester received it from etcd),
 *     which ages it out of the window like any event
 */
public record PreloadedRevision(List<Event> events, long timestampMillis) {
    /** Validates and copies. */
    public PreloadedRevision {
        events = List.copyOf(events);
        if (events.isEmpty()) {
            throw new IllegalArgumentException("a revision has at least one event");
        }
    }

    /** The revision. */
    public long revision() {
        return events.get(0).getRevision();
    }
}
