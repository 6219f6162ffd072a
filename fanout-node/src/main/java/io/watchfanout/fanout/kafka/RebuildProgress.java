package io.watchfanout.fanout.kafka;

/**
 * How far the rebuild from Kafka has come, for logs and metrics. Written by the feed
 * thread, read by any thread (volatile fields).
 */
public final class RebuildProgress {
    volatile String phase = "starting";
    volatile long stateRecords;
    volatile long keysLoaded;
    volatile double stateRatio;
    volatile long eventsRecords;
    volatile double eventsRatio;
    volatile long consumerLag = -1;
    volatile double rebuildSeconds = -1;
    volatile long newestRecordMillis;
    volatile int rebuildRestarts;
    volatile long deleteRetentionMillis = -1;
    volatile long digestVerifiedRevision;
    volatile long digestVerifiedMillis;
    volatile long digestsEqual;
    volatile long digestsDifferent;
    volatile long digestsTooOld;

    /**
     * "starting", "waiting for Kafka", "state", "restarting", "events", "waiting for the ingester" (the
     * events topic holds no record yet), "serving" or "failed".
     */
    public String phase() {
        return phase;
    }

    /** State-topic records read. */
    public long stateRecords() {
        return stateRecords;
    }

    /** Keys in the snapshot read from the state topic. */
    public long keysLoaded() {
        return keysLoaded;
    }

    /** Fraction 0..1 of the state topic's end offsets read. */
    public double stateRatio() {
        return stateRatio;
    }

    /** Events-topic records applied. */
    public long eventsRecords() {
        return eventsRecords;
    }

    /** Fraction 0..1 of the events topic's end offset (at rebuild start) reached. */
    public double eventsRatio() {
        return eventsRatio;
    }

    /**
     * Seconds since the newest record read from the events topic was written by the ingester
     * (its Kafka timestamp; the ingester writes at least a heartbeat a second while it is
     * healthy), or NaN before the first record. Clocks of the ingester's and the node's hosts
     * are assumed to agree within a second or so (NTP); a negative difference counts as 0.
     */
    public double feedStalenessSeconds() {
        long newest = newestRecordMillis;
        return newest == 0 ? Double.NaN : Math.max(0, System.currentTimeMillis() - newest) / 1000.0;
    }

    /** Records between the consumer's position and the events topic's end, -1 when unknown. */
    public long consumerLag() {
        return consumerLag;
    }

    /**
     * Times the read of the state topic was dropped and started again because it took half the
     * topic's {@code delete.retention.ms} or more ({@link io.watchfanout.schema.StateScan}).
     */
    public int rebuildRestarts() {
        return rebuildRestarts;
    }

    /** The state topic's {@code delete.retention.ms} as last learnt from Kafka, milliseconds; -1 before. */
    public long deleteRetentionMillis() {
        return deleteRetentionMillis;
    }

    /** Seconds from start until the node first caught up, -1 before. */
    public double rebuildSeconds() {
        return rebuildSeconds;
    }

    /**
     * The etcd revision of the last digest ({@code Progress.digest}) the cache was found equal
     * to, 0 before the first.
     */
    public long digestVerifiedRevision() {
        return digestVerifiedRevision;
    }

    /** When the cache was last found equal to a digest (epoch milliseconds), 0 before. */
    public long digestVerifiedMillis() {
        return digestVerifiedMillis;
    }

    /**
     * Digests compared, by outcome: {@code equal}, {@code different} (the node then stops
     * serving), {@code too_old} (further back than the revisions the node keeps for it).
     */
    public long digests(String outcome) {
        return switch (outcome) {
            case "equal" -> digestsEqual;
            case "different" -> digestsDifferent;
            case "too_old" -> digestsTooOld;
            default -> throw new IllegalArgumentException(outcome);
        };
    }
}
