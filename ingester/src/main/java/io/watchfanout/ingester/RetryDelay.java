package io.watchfanout.ingester;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The wait before the next try of etcd or Kafka: a first delay, doubled after each wait up to
 * {@code --retry-backoff-max}, back to the first once a try succeeded; cut short when the
 * ingester stops.
 *
 * <p>Not thread-safe: owned by the publisher thread.
 */
final class RetryDelay {
    private final Duration first;
    private final Duration max;
    private final BooleanSupplier running;
    private Duration next;

    /**
     * @param first the first delay
     * @param max the longest delay
     * @param running false once the ingester stops
     */
    RetryDelay(Duration first, Duration max, BooleanSupplier running) {
        this.first = first;
        this.max = max;
        this.running = running;
        this.next = first;
    }

    /** The next wait in milliseconds, for the line that announces it. */
    long millis() {
        return next.toMillis();
    }

    /** Back to the first delay: a try succeeded. */
    void reset() {
        next = first;
    }

    /**
     * Waits the next delay, then doubles it (up to the longest).
     *
     * @return false when the ingester stopped or the thread was interrupted (its flag set again)
     */
    boolean await() {
        boolean goOn = sleep(next, running);
        Duration doubled = next.multipliedBy(2);
        next = doubled.compareTo(max) <= 0 ? doubled : max;
        return goOn;
    }

    /**
     * Sleeps {@code d} on the calling thread.
     *
     * @return false when the ingester stopped meanwhile or the thread was interrupted (its flag
     *     set again)
     */
    static boolean sleep(Duration d, BooleanSupplier running) {
        try {
            Thread.sleep(d.toMillis());
            return running.getAsBoolean();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
