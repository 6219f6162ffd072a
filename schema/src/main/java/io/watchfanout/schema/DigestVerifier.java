package io.watchfanout.schema;

import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import java.util.Optional;

/**
 * Checks a reader's state against the digests the ingester publishes in the events topic
 * ({@code Progress.digest}), beside {@link RevisionChain}: feed it every record in offset order.
 * It keeps the state's {@link StateHash} up to date from the events alone (every event and
 * resync entry carries the key-value before it) and, per revision, what that revision changed,
 * so that a digest taken at an older revision R is compared with the state as it was at R: the
 * changes of the revisions after R are taken back off the sums. O(1) per event; a digest costs
 * the revisions since R.
 *
 * <p>A digest older than the revisions kept ({@code maxRevisions}), or than where the reader
 * started, cannot be checked: {@link Outcome#TOO_OLD}.
 *
 * <p>Not thread-safe: one instance per reader thread.
 */
public final class DigestVerifier {
    /** What a digest said about the reader's state. */
    public enum Outcome {
        /** The state at the digest's revision has etcd's key count and hash. */
        EQUAL,
        /** It differs from etcd's: {@link DigestRanges} names where. */
        DIFFERENT,
        /** The digest's revision is older than the changes this verifier still holds. */
        TOO_OLD
    }

    /**
     * One digest checked.
     *
     * @param digest the digest as published
     * @param outcome what it said
     * @param actual the reader's key count and hash at the digest's revision (null for TOO_OLD)
     */
    public record Verdict(StateDigest digest, Outcome outcome, StateHash actual) {
        @Override
        public String toString() {
            return "digest at revision " + digest.getRevision() + ": " + outcome
                    + (outcome == Outcome.DIFFERENT
                            ? " (etcd " + new StateHash(digest.getHash(), digest.getKeyCount()) + ", reader " + actual
                                    + ")"
                            : "");
        }
    }

    private static final int INITIAL_REVISIONS = 1024;

    private final StateHash state;
    private final int maxRevisions;
    /** Ring of per-revision changes: size entries ending at head - 1; grows up to maxRevisions. */
    private long[] revisions;

    private long[] hashDeltas;
    private long[] countDeltas;
    private int head;

    private int size;
    /** Every change after this revision is in the ring. */
    private long coveredFrom;

    /**
     * A verifier of a reader that starts empty at the topic's beginning.
     *
     * @param maxRevisions revisions whose changes are kept, {@code >= 1} (24 bytes each, allocated
     *     as they come): how far back a digest may lie behind the records already read
     */
    public DigestVerifier(int maxRevisions) {
        this(new StateHash(), 0, maxRevisions);
    }

    /**
     * A verifier of a reader that starts from a state it already holds.
     *
     * @param state the hash of the state the reader holds at {@code revision} (taken over: do not
     *     change it afterwards)
     * @param revision the revision of that state
     * @param maxRevisions as in {@link #DigestVerifier(int)}
     */
    public DigestVerifier(StateHash state, long revision, int maxRevisions) {
        if (maxRevisions < 1) {
            throw new IllegalArgumentException("maxRevisions " + maxRevisions);
        }
        this.state = state;
        this.coveredFrom = revision;
        this.maxRevisions = maxRevisions;
        int initial = Math.min(maxRevisions, INITIAL_REVISIONS);
        this.revisions = new long[initial];
        this.hashDeltas = new long[initial];
        this.countDeltas = new long[initial];
    }

    /**
     * Applies the next record of the events topic.
     *
     * @return the verdict when the record is a {@code Progress} that carries a digest
     */
    public Optional<Verdict> accept(EventsRecord record) {
        switch (record.getBodyCase()) {
            case EVENT -> apply(record.getEvent());
            case PROGRESS -> {
                if (record.getProgress().hasDigest()) {
                    return Optional.of(check(record.getProgress().getDigest()));
                }
            }
            default -> {}
        }
        return Optional.empty();
    }

    /** Applies one event (or resync entry) of revision {@code event.revision}. */
    public void apply(Event event) {
        apply(
                event.getRevision(),
                event.hasPrevKv() ? event.getPrevKv() : null,
                event.getType() == Event.Type.PUT ? event.getKv() : null);
    }

    /**
     * Applies one change of a key at {@code revision}, as the reader's own state saw it: for a
     * reader that hashes what it holds rather than what the records say.
     *
     * @param removed the key-value the change replaced or deleted, null for a new key
     * @param added the key-value it wrote, null for a delete
     */
    public void apply(long revision, KeyValue removed, KeyValue added) {
        long hashBefore = state.hash();
        long countBefore = state.keyCount();
        if (removed != null) {
            state.remove(removed);
        }
        if (added != null) {
            state.add(added);
        }
        int last = (head - 1 + revisions.length) % revisions.length;
        if (size == 0 || revisions[last] != revision) {
            if (size == revisions.length && revisions.length < maxRevisions) {
                grow();
            }
            if (size == revisions.length) {
                int oldest = (head - size + revisions.length) % revisions.length;
                coveredFrom = revisions[oldest];
                size--;
            }
            last = head;
            revisions[last] = revision;
            hashDeltas[last] = 0;
            countDeltas[last] = 0;
            head = (head + 1) % revisions.length;
            size++;
        }
        hashDeltas[last] += state.hash() - hashBefore;
        countDeltas[last] += state.keyCount() - countBefore;
    }

    /** Doubles the ring (up to maxRevisions), unrolled so that the oldest change is at 0. */
    private void grow() {
        int n = Math.min(maxRevisions, revisions.length * 2);
        long[] r = new long[n];
        long[] h = new long[n];
        long[] c = new long[n];
        for (int i = 0; i < size; i++) {
            int slot = (head - size + i + revisions.length) % revisions.length;
            r[i] = revisions[slot];
            h[i] = hashDeltas[slot];
            c[i] = countDeltas[slot];
        }
        revisions = r;
        hashDeltas = h;
        countDeltas = c;
        head = size % n;
    }

    /** Compares the state at {@code digest.revision} with the digest. */
    public Verdict check(StateDigest digest) {
        long at = digest.getRevision();
        if (at < coveredFrom) {
            return new Verdict(digest, Outcome.TOO_OLD, null);
        }
        long hash = state.hash();
        long count = state.keyCount();
        for (int i = 0; i < size; i++) {
            int slot = (head - 1 - i + 2 * revisions.length) % revisions.length;
            if (revisions[slot] <= at) {
                break;
            }
            hash -= hashDeltas[slot];
            count -= countDeltas[slot];
        }
        StateHash actual = new StateHash(hash, count);
        return new Verdict(digest, actual.matches(digest) ? Outcome.EQUAL : Outcome.DIFFERENT, actual);
    }

    /** The hash of the state after every record applied so far. */
    public StateHash state() {
        return new StateHash(state.hash(), state.keyCount());
    }
}
