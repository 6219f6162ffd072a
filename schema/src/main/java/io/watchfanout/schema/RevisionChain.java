package io.watchfanout.schema;

import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.Resync;

/**
 * Proves that a reader of the events topic has missed and repeated nothing: every record
 * names the revision of the record before it ({@code prev_revision}), a revision's events
 * come contiguously with index {@code 0..count-1}, and a resync's entries follow it.
 *
 * <p>Feed it every record of the events topic in offset order with {@link #accept}. The
 * first record accepted is trusted as the starting point unless {@link #RevisionChain(long)}
 * names the revision the reader already holds.
 *
 * <p>Not thread-safe: one instance per reader thread.
 */
public final class RevisionChain {
    private static final long UNKNOWN = -1;

    private long lastRevision;
    /** Events of lastRevision still expected before the revision is complete. */
    private long pendingInRevision;

    private boolean pendingResync;
    private long revisionCount;
    private long nextIndex;

    /** A chain that trusts the first record it sees. */
    public RevisionChain() {
        this(UNKNOWN);
    }

    /**
     * A chain that continues from a reader that holds everything up to {@code lastRevision}
     * (for example a state-topic checkpoint's revision).
     *
     * @param lastRevision the revision of the last record already applied, {@code >= 0}
     */
    public RevisionChain(long lastRevision) {
        this.lastRevision = lastRevision;
    }

    /** The revision of the last record accepted, or -1 before the first. */
    public long lastRevision() {
        return lastRevision;
    }

    /**
     * True when the records accepted so far end on a revision boundary: no event or resync
     * entry of the last revision is still expected. Bookmarks and resume points may only be
     * placed where this is true (docs/ARCHITECTURE.md, invariant 2).
     */
    public boolean atRevisionBoundary() {
        return pendingInRevision == 0;
    }

    /**
     * Checks the next record of the events topic against the chain and advances it.
     *
     * @param record the next record, in offset order
     * @return the record's revision
     * @throws RevisionChainException if the record does not follow the previous one (a gap,
     *     a repeat, a revision split apart, or an unknown record type); the chain is left
     *     unchanged
     */
    public long accept(EventsRecord record) {
        switch (record.getBodyCase()) {
            case EVENT:
                return acceptEvent(record.getEvent());
            case PROGRESS:
                return acceptProgress(record.getProgress());
            case RESYNC:
                return acceptResync(record.getResync());
            default:
                throw new RevisionChainException("events record without a known body (" + record.getBodyCase()
                        + "); written by a newer schema?");
        }
    }

    private long acceptEvent(Event event) {
        String what = (event.getResync() ? "resync entry" : "event") + " at revision " + event.getRevision() + " index "
                + event.getIndex() + " of " + event.getCount();
        checkPrev(event.getPrevRevision(), what);
        if (event.getIndex() < 0 || event.getIndex() >= event.getCount()) {
            throw new RevisionChainException(what + " (expected: 0 <= index < count)");
        }
        if (pendingInRevision > 0) {
            if (event.getRevision() != lastRevision
                    || event.getResync() != pendingResync
                    || event.getIndex() != nextIndex
                    || event.getCount() != revisionCount) {
                throw new RevisionChainException("revision " + lastRevision + " is incomplete (expected index "
                        + nextIndex + " of " + revisionCount + ") but the next record is an " + what);
            }
        } else {
            if (event.getResync()) {
                throw new RevisionChainException(what + " without a Resync record before it");
            }
            if (lastRevision != UNKNOWN && event.getRevision() <= lastRevision) {
                throw new RevisionChainException(
                        what + " does not advance past revision " + lastRevision + " (a repeat)");
            }
            if (lastRevision != UNKNOWN && event.getIndex() != 0) {
                throw new RevisionChainException(what + " starts a revision (expected: index 0)");
            }
            lastRevision = event.getRevision();
            revisionCount = event.getCount();
            nextIndex = event.getIndex();
            pendingInRevision = event.getCount() - (long) event.getIndex();
            pendingResync = false;
        }
        nextIndex++;
        pendingInRevision--;
        return lastRevision;
    }

    private long acceptProgress(Progress progress) {
        String what = "progress at revision " + progress.getRevision();
        checkBoundary(what);
        checkPrev(progress.getPrevRevision(), what);
        // A progress record that repeats the last revision is a heartbeat: the ingester is alive
        // and nothing new happened. It never goes back.
        if (lastRevision != UNKNOWN && progress.getRevision() < lastRevision) {
            throw new RevisionChainException(what + " goes back before revision " + lastRevision);
        }
        lastRevision = progress.getRevision();
        return lastRevision;
    }

    private long acceptResync(Resync resync) {
        String what = "resync at revision " + resync.getRevision();
        checkBoundary(what);
        checkPrev(resync.getPrevRevision(), what);
        if (lastRevision != UNKNOWN && resync.getRevision() < lastRevision) {
            throw new RevisionChainException(what + " goes back before revision " + lastRevision);
        }
        if (resync.getEntryCount() < 0) {
            throw new RevisionChainException(what + " has entry count " + resync.getEntryCount());
        }
        lastRevision = resync.getRevision();
        pendingInRevision = resync.getEntryCount();
        pendingResync = pendingInRevision > 0;
        revisionCount = resync.getEntryCount();
        nextIndex = 0;
        return lastRevision;
    }

    private void checkBoundary(String what) {
        if (pendingInRevision > 0) {
            throw new RevisionChainException("revision " + lastRevision + " is incomplete (" + pendingInRevision
                    + " more record(s) expected) but the next record is a " + what);
        }
    }

    private void checkPrev(long prevRevision, String what) {
        if (lastRevision != UNKNOWN && prevRevision != lastRevision) {
            throw new RevisionChainException(
                    what + " names prev_revision " + prevRevision + " but the record before it had revision "
                            + lastRevision + (prevRevision > lastRevision ? " (a gap)" : " (a repeat)"));
        }
    }
}
