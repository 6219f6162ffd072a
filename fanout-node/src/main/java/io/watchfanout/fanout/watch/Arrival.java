package io.watchfanout.fanout.watch;

import io.watchfanout.schema.v1.Status;

/**
 * What waiting for the cache to reach a revision came to ({@link WatchCore#awaitRevision(long,
 * java.time.Duration, java.util.concurrent.Executor, java.util.function.Consumer)}): a front end
 * maps it to its own wire form (HTTP 503/504 Status, a gRPC status, a Kubernetes Status).
 *
 * @param outcome what happened
 * @param status null when {@link Outcome#REACHED}, else the core's Status: 503 NotReady or 504
 *     Timeout, with a message naming the revisions and the wait
 */
public record Arrival(Outcome outcome, Status status) {
    /** The outcomes. */
    public enum Outcome {
        /** The cache is at or past the revision and the node serves. */
        REACHED,
        /** The node does not serve (rebuilding, failed, draining). */
        NOT_READY,
        /** The wait ended before the cache got there. */
        TIMED_OUT
    }

    static final Arrival REACHED = new Arrival(Outcome.REACHED, null);

    /** True when the revision was reached. */
    public boolean reached() {
        return outcome == Outcome.REACHED;
    }
}
