package io.watchfanout.ingester.ops;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Why the ingester is not ready, from four sources in this order: a fatal error (for good), a
 * dependency that did not answer its last probe, a Kafka commit that has waited longer than
 * {@code --dependency-timeout}, and the publisher's own state (starting, standby,
 * resynchronising, re-watching, waiting for a dependency).
 *
 * <p>Thread-safe without locks: the publisher thread writes the state and the commit times, any
 * thread may read; the first fatal reason wins (compare-and-set), from any thread.
 */
public final class IngesterReadiness {
    private final DependencyMonitor monitor;
    private final Duration commitTimeout;
    private final String kafkaBootstrap;
    /** The fatal reason's value until there is one; compared by reference. */
    private static final String NONE = "";

    private final AtomicReference<String> fatal = new AtomicReference<>(NONE);
    private volatile String state = "starting";
    /** When the commit in flight started (System.nanoTime()), 0 when none is. */
    private volatile long commitStartedNanos;

    /**
     * @param monitor the dependency probes
     * @param commitTimeout how long a Kafka commit may wait before the ingester is not ready
     *     ({@code --dependency-timeout})
     * @param kafkaBootstrap Kafka's bootstrap servers, for the reason
     */
    public IngesterReadiness(DependencyMonitor monitor, Duration commitTimeout, String kafkaBootstrap) {
        this.monitor = monitor;
        this.commitTimeout = commitTimeout;
        this.kafkaBootstrap = kafkaBootstrap;
    }

    /** Empty while ready, else the first reason from the sources above. */
    public String reason() {
        String stopped = fatal.get();
        if (!stopped.isEmpty()) {
            return stopped;
        }
        String dependency = monitor.problem();
        if (!dependency.isEmpty()) {
            return dependency;
        }
        long started = commitStartedNanos;
        if (started != 0 && System.nanoTime() - started > commitTimeout.toNanos()) {
            return "a Kafka transaction has waited " + (System.nanoTime() - started) / 1_000_000_000L
                    + " s for its commit (Kafka at " + kafkaBootstrap + ")";
        }
        return state;
    }

    /** The fatal reason, or empty while the ingester has not stopped for good. */
    public String fatal() {
        return fatal.get();
    }

    /**
     * Records why the ingester stops for good, unless a reason was recorded before.
     *
     * @return true for the first reason, false when one was recorded already
     */
    public boolean fail(String reason) {
        return fatal.compareAndSet(NONE, reason);
    }

    /** The publisher's own state: empty while it publishes from a live watch, else what it does instead. */
    public String state() {
        return state;
    }

    /** @param state what the publisher does instead of publishing from a live watch; empty when it does */
    public void state(String state) {
        this.state = state;
    }

    /** A Kafka commit starts waiting; until {@link #commitEnded} its wait counts against readiness. */
    public void commitStarted() {
        commitStartedNanos = System.nanoTime();
    }

    /** The commit in flight ended, committed or not. */
    public void commitEnded() {
        commitStartedNanos = 0;
    }
}
