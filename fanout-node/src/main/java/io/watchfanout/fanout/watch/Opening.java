package io.watchfanout.fanout.watch;

import io.watchfanout.schema.v1.Status;

/**
 * What opening a watch through the core's one entry came to ({@link WatchCore#open}): the watch,
 * or why not, as the core's Status that each front end maps to its own wire form.
 *
 * @param outcome what happened
 * @param watch the open watch when {@link Outcome#OPENED}, else null
 * @param status null when opened; else 410 Expired, 429 TooManyRequests, 503 NotReady or 504
 *     Timeout, with a message for the client
 */
public record Opening(Outcome outcome, Watch watch, Status status) {
    /** The outcomes. */
    public enum Outcome {
        /** The watch is open: its transport polls it once woken. */
        OPENED,
        /** Its start revision is older than the history this node serves (Kubernetes' 410 Expired). */
        EXPIRED,
        /** It needs a read of older history and the node reads as many as it may now (retry later). */
        TOO_MANY_READS,
        /** The node does not serve (rebuilding, failed, draining). */
        NOT_READY,
        /** Its start revision is ahead of the cache, which did not get there within the wait. */
        TIMED_OUT
    }

    /** True when the watch is open. */
    public boolean opened() {
        return outcome == Outcome.OPENED;
    }
}
