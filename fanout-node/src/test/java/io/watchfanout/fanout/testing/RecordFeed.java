package io.watchfanout.fanout.testing;

import io.watchfanout.fanout.kafka.RecordApplier;
import io.watchfanout.fanout.watch.CacheFeed;
import io.watchfanout.schema.v1.EventsRecord;
import java.util.List;

/**
 * Feeds a core the records of the events topic (as {@link EtcdLog} makes them) the way the
 * node's Kafka side does, through its {@link RecordApplier}: whole revisions, checked against
 * the revision chain. The one place tests of the core and of the front ends reach the Kafka
 * side, so that their own packages keep the import rules (build/import-control.xml).
 *
 * <p>Not thread-safe: one feeding thread, as the node's.
 */
public final class RecordFeed {
    private final RecordApplier applier;

    /**
     * @param feed the core's feed ({@code WatchCore.feed()})
     * @param startRevision the revision the feed holds already, or -1 to trust the first record
     */
    public RecordFeed(CacheFeed feed, long startRevision) {
        this.applier = new RecordApplier(feed, startRevision);
    }

    /** Applies the next record (a revision applies once its last event arrives). */
    public void accept(EventsRecord record) {
        applier.accept(record);
    }

    /** Applies {@code records} in order. */
    public void accept(List<EventsRecord> records) {
        records.forEach(applier::accept);
    }
}
