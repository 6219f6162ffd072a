package io.watchfanout.ingester.publish;

/**
 * A whole-keyspace watch skipped a revision or went back: it cannot prove it delivered
 * every event, so the ingester re-watches from its last published revision + 1 (and, when
 * the same revision is skipped again, rebuilds it from range reads).
 */
public final class DenseRevisionException extends Exception {
    private static final long serialVersionUID = 1L;

    private final long expected;
    private final long seen;

    /**
     * @param expected the revision the watch should have delivered next
     * @param seen the revision it delivered instead
     */
    public DenseRevisionException(long expected, long seen) {
        super("watch jumped from revision " + (expected - 1) + " to " + seen + " (expected: " + expected + ")");
        this.expected = expected;
        this.seen = seen;
    }

    /** The revision the watch should have delivered next: the proven revision + 1. */
    public long expected() {
        return expected;
    }

    /** The revision the watch delivered instead; above {@link #expected} for a skip. */
    public long seen() {
        return seen;
    }
}
