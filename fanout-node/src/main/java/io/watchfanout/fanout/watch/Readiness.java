package io.watchfanout.fanout.watch;

/**
 * Whether the node serves, and why not: the one answer behind {@code /readyz}, the 503 of a
 * request that finds the node not serving (HTTP and the etcd API) and the readiness metrics.
 * Kubernetes' watch cache has the same three states: not yet initialised (the rebuild from Kafka),
 * failed for good (bad data, invariant 8 of docs/ARCHITECTURE.md) and, besides, shutting down.
 * A stale feed fails readiness but not serving: the node goes on answering from what it has, as
 * a watch cache cut off from etcd does.
 *
 * <p>Thread-safety: volatile fields; any thread.
 */
public final class Readiness {
    private volatile boolean rebuilt;
    private volatile String failure;
    private volatile String feedProblem;
    private volatile boolean draining;
    private volatile String rebuildProblem;

    void markRebuilt() {
        rebuilt = true;
    }

    void fail(String reason) {
        failure = reason;
    }

    void rebuildDelayed(String problem) {
        rebuildProblem = problem;
    }

    void feedStale(String problem) {
        feedProblem = problem;
    }

    /** The node is shutting down: readiness fails and new requests are refused (with 503). Any thread. */
    public void drain() {
        draining = true;
    }

    /** True while shutting down. */
    public boolean isDraining() {
        return draining;
    }

    /** True once the cache caught up with Kafka, until it fails (draining aside). */
    public boolean isRebuilt() {
        return rebuilt && failure == null;
    }

    /** Why the node stopped serving for good, or null. */
    public String failure() {
        return failure;
    }

    /** Why the feed is stale, or null while it is fresh. */
    public String feedProblem() {
        return feedProblem;
    }

    /**
     * Why a new request cannot be served now, or null when it can: stopped for good, still
     * rebuilding, or shutting down. The text is the message of a 503 {@code NotReady} answer.
     */
    public String notServing() {
        String f = failure;
        if (f != null) {
            return "this node stopped serving: " + f;
        }
        if (!rebuilt) {
            return "the cache is rebuilding from Kafka" + because() + "; retry, or ask another node";
        }
        if (draining) {
            return "this node is shutting down; ask another node";
        }
        return null;
    }

    /** Why the rebuild takes longer than it should (it started over), as a clause; empty when it does not. */
    private String because() {
        String p = rebuilt ? null : rebuildProblem;
        return p == null ? "" : ": it " + p;
    }

    /** Why {@code /readyz} fails, or null when the node is ready: {@link #notServing} or a stale feed. */
    public String notReady() {
        if (draining) {
            return "shutting down";
        }
        String f = failure;
        if (f != null) {
            return "cache failed: " + f;
        }
        if (!rebuilt) {
            return "cache is rebuilding from Kafka" + because();
        }
        String stale = feedProblem;
        return stale == null ? null : "feed is stale: " + stale;
    }
}
