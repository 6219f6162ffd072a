package io.watchfanout.bench.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Nearest-rank percentiles of the fault run's times, in milliseconds. Thread-safety: stateless. */
final class Percentiles {
    private Percentiles() {}

    /**
     * The nearest-rank percentile: the smallest value with at least {@code p} percent of the values at or
     * below it (p 50 of 1..4 is 2, p 99 of 100 values is the 99th, of fewer than 100 the largest); -1 for
     * no values.
     *
     * @param p 0 &lt; p &lt;= 100
     */
    static long of(List<Long> millis, double p) {
        if (millis.isEmpty()) {
            return -1;
        }
        List<Long> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * sorted.size());
        return sorted.get(Math.max(0, rank - 1));
    }

    /** The percentile in seconds with one decimal ("1.2 s"), or "-" for no values. */
    static String secs(List<Long> millis, double p) {
        long v = of(millis, p);
        return v < 0 ? "-" : String.format("%.1f s", v / 1000.0);
    }
}
