package io.watchfanout.fanout.security;

/**
 * A token bucket: {@code rate} tokens a second up to {@code burst}, one taken per new watch.
 * Thread-safe (synchronized; it is touched once per watch start, not per event).
 */
final class TokenBucket {
    private final double ratePerNano;
    private final double burst;
    private double tokens;
    private long last;

    TokenBucket(double ratePerSecond, int burst, long nowNanos) {
        this.ratePerNano = ratePerSecond / 1e9;
        this.burst = burst;
        this.tokens = burst;
        this.last = nowNanos;
    }

    /** Takes a token: 0 when one was there, else the seconds until one will be (at least 1). */
    synchronized int take(long nowNanos) {
        tokens = Math.min(burst, tokens + (nowNanos - last) * ratePerNano);
        last = nowNanos;
        if (tokens >= 1) {
            tokens -= 1;
            return 0;
        }
        return (int) Math.max(1, Math.ceil((1 - tokens) / ratePerNano / 1e9));
    }

    /** True when the bucket is full again (an idle identity's state can be dropped). */
    synchronized boolean isFull(long nowNanos) {
        return tokens + (nowNanos - last) * ratePerNano >= burst;
    }
}
