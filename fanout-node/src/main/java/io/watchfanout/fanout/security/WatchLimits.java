package io.watchfanout.fanout.security;

/**
 * The watch limits of a node: {@code --max-watchers} for the node, and per identity
 * {@code --max-watchers-per-identity} concurrent watches and {@code --watch-rate-per-identity}
 * new watches per second with bursts of {@code --watch-burst-per-identity} (a token bucket).
 *
 * @param maxWatchers watches open on the node at most, {@code >= 0}; 0 = no limit
 * @param maxPerIdentity watches one identity may have open at most, {@code >= 0}; 0 = no limit
 * @param ratePerIdentity new watches per second one identity may open on average, {@code >= 0};
 *     0 = no limit
 * @param burstPerIdentity new watches one identity may open at once before the rate applies,
 *     {@code >= 1} when a rate is set
 */
public record WatchLimits(int maxWatchers, int maxPerIdentity, double ratePerIdentity, int burstPerIdentity) {
    /** No limits. */
    public static final WatchLimits NONE = new WatchLimits(0, 0, 0, 0);

    /** Checks the ranges. */
    public WatchLimits {
        if (maxWatchers < 0 || maxPerIdentity < 0 || ratePerIdentity < 0 || burstPerIdentity < 0) {
            throw new IllegalArgumentException("watch limits must not be negative");
        }
        if (ratePerIdentity > 0 && burstPerIdentity < 1) {
            throw new IllegalArgumentException("a watch rate needs a burst of at least 1");
        }
    }

    /** The limits as the flags name them, for log lines; 0 is no limit. */
    @Override
    public String toString() {
        return "--max-watchers " + maxWatchers + ", --max-watchers-per-identity " + maxPerIdentity
                + ", --watch-rate-per-identity " + ratePerIdentity + ", --watch-burst-per-identity " + burstPerIdentity;
    }
}
