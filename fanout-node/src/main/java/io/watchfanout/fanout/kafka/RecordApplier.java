package io.watchfanout.fanout.kafka;

import io.watchfanout.fanout.watch.CacheFeed;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.RevisionChainException;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the records of the events topic, in offset order, into whole-revision updates of a
 * {@link CacheFeed}: checks each record against the {@link RevisionChain} first, collects
 * the events of a revision (and the entries of a resync) until the revision is complete,
 * then applies them at once, so that the cache never holds part of a revision (docs/ARCHITECTURE.md, invariant 2).
 *
 * <p>Not thread-safe: one instance per feed thread.
 */
public final class RecordApplier {
    private final CacheFeed feed;
    private final RevisionChain chain;
    private List<Event> pending = new ArrayList<>();
    private long pendingResyncRevision = -1;
    private long records;

    /**
     * @param feed where complete revisions go
     * @param startRevision the revision the feed already holds (a state checkpoint), or -1 to
     *     trust the first record (reading the events topic from its first offset)
     */
    public RecordApplier(CacheFeed feed, long startRevision) {
        this.feed = feed;
        this.chain = startRevision < 0 ? new RevisionChain() : new RevisionChain(startRevision);
    }

    /** Records accepted so far. */
    public long records() {
        return records;
    }

    /** The revision of the last record accepted, -1 before the first. */
    public long lastRevision() {
        return chain.lastRevision();
    }

    /**
     * Checks and applies the next record.
     *
     * @throws RevisionChainException if the record breaks the chain; nothing is applied and
     *     the reader must stop (docs/ARCHITECTURE.md, invariant 8)
     */
    public void accept(EventsRecord record) {
        accept(record, 0);
    }

    /**
     * Checks and applies the next record.
     *
     * @param timestampMillis the record's Kafka timestamp (epoch milliseconds), 0 when unknown
     * @throws RevisionChainException if the record breaks the chain; nothing is applied and
     *     the reader must stop (invariant 8)
     */
    public void accept(EventsRecord record, long timestampMillis) {
        if (record == null) {
            throw new RevisionChainException("events record without a value (a tombstone?)");
        }
        if (record.hasEvent()
                && pending.isEmpty()
                && pendingResyncRevision < 0
                && record.getEvent().getIndex() != 0) {
            throw new RevisionChainException("the events topic starts inside revision "
                    + record.getEvent().getRevision() + " (index "
                    + record.getEvent().getIndex()
                    + "): cannot rebuild a consistent cache from it");
        }
        long revision = chain.accept(record);
        records++;
        switch (record.getBodyCase()) {
            case EVENT:
                pending.add(record.getEvent());
                if (chain.atRevisionBoundary()) {
                    List<Event> complete = pending;
                    pending = new ArrayList<>();
                    if (pendingResyncRevision >= 0) {
                        long resync = pendingResyncRevision;
                        pendingResyncRevision = -1;
                        feed.applyResync(resync, complete);
                    } else {
                        feed.applyRevision(complete, timestampMillis);
                    }
                }
                break;
            case PROGRESS:
                feed.applyProgress(revision);
                break;
            case RESYNC:
                if (chain.atRevisionBoundary()) {
                    feed.applyResync(revision, List.of());
                } else {
                    pendingResyncRevision = revision;
                }
                break;
            default:
                throw new RevisionChainException("unknown record " + record.getBodyCase());
        }
    }
}
