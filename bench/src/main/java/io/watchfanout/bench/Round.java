package io.watchfanout.bench;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * One measured round: runs the load, shows a progress line, waits for the deliveries to settle,
 * and computes rates, latency percentiles and per-process CPU and RSS over the round.
 */
final class Round {
    /** What one round measured. */
    static final class Result {
        long puts;
        long deliveries;
        double seconds;
        double deliveriesPerSecond;
        double putsPerSecond;
        Histogram latency;
        final Map<String, Double> cpuSeconds = new LinkedHashMap<>();
        final Map<String, Double> rssMiB = new LinkedHashMap<>();

        double percentileMillis(double p) {
            return latency == null || latency.getTotalCount() == 0
                    ? Double.NaN
                    : latency.getValueAtPercentile(p) / 1000.0;
        }

        /** CPU of a process in cores (CPU-seconds per second). */
        double cores(String process) {
            return cpuSeconds.getOrDefault(process, Double.NaN) / seconds;
        }
    }

    private static boolean firstWarmUpDone;

    private Round() {}

    /**
     * Runs the load for {@code warmup} without measuring: the processes' JIT compilers otherwise
     * take a large share of the 2 cores during the first rounds (C2 at 15-30 % of a core per JVM
     * in the first minute here) and charge it to the figures.
     */
    static void warmUp(
            Load load, double rate, Duration warmup, LongSupplier deliveries, Progress progress, String label)
            throws InterruptedException {
        if (warmup.isZero() || warmup.isNegative()) {
            return;
        }
        // The first warm-up of a run is four times as long: Kafka's and the ingester's C2
        // compilers still take 10-15 % of a core each after a minute of load.
        Duration d = firstWarmUpDone ? warmup : warmup.multipliedBy(4);
        firstWarmUpDone = true;
        progress.log(label + ": warming up for " + d.toSeconds() + " s (not measured)");
        load.run(rate, d.toNanos());
        load.drain(5000);
        // Open loop leaves a backlog behind a slower watch path: let it drain (at most 2 minutes),
        // so that the first round measures its own load, not the warm-up's.
        settle(deliveries, System.nanoTime(), 1_000_000_000L, 120_000_000_000L);
    }

    /** Deliveries when they stopped changing, and when they last changed (System.nanoTime). */
    private record Settled(long deliveries, long lastChangeNanos) {}

    /**
     * Waits until {@code deliveries} has not changed for {@code quietNanos}, or until
     * {@code maxNanos} after {@code fromNanos}; polls every 100 ms.
     */
    private static Settled settle(LongSupplier deliveries, long fromNanos, long quietNanos, long maxNanos)
            throws InterruptedException {
        long last = deliveries.getAsLong();
        long lastChange = fromNanos;
        long quietSince = System.nanoTime();
        while (System.nanoTime() - quietSince < quietNanos && System.nanoTime() - fromNanos < maxNanos) {
            Thread.sleep(100);
            long d = deliveries.getAsLong();
            if (d != last) {
                last = d;
                lastChange = System.nanoTime();
                quietSince = lastChange;
            }
        }
        return new Settled(last, lastChange);
    }

    /**
     * @param processes name → pid of the processes whose CPU and RSS to report
     * @param deliveries frames (or events) received so far by the watchers
     * @param latency the watchers' latency recorder (reset at the start)
     * @param label the progress line's prefix
     */
    static Result run(
            Load load,
            double rate,
            long durationNanos,
            Map<String, Long> processes,
            LongSupplier deliveries,
            Recorder latency,
            Progress progress,
            String label)
            throws InterruptedException {
        Map<String, Double> cpu0 = new LinkedHashMap<>();
        processes.forEach((n, pid) -> cpu0.put(n, Proc.cpuSeconds(pid)));
        long d0 = deliveries.getAsLong();
        long p0 = load.acked();
        if (latency != null) {
            latency.getIntervalHistogram();
        }
        long start = System.nanoTime();
        Thread ticker = new Thread(
                () -> {
                    long lastD = d0;
                    long lastT = start;
                    while (!Thread.currentThread().isInterrupted()) {
                        try {
                            Thread.sleep(1000);
                        } catch (InterruptedException e) {
                            return;
                        }
                        long now = System.nanoTime();
                        long d = deliveries.getAsLong();
                        progress.show(String.format(
                                "%s: %.0f puts/s, %.0f deliveries/s",
                                label,
                                (load.acked() - p0) / ((now - start) / 1e9),
                                (d - lastD) / ((now - lastT) / 1e9)));
                        lastD = d;
                        lastT = now;
                    }
                },
                "bench-progress");
        ticker.setDaemon(true);
        ticker.start();
        try {
            load.run(rate, durationNanos);
            long loadEnd = System.nanoTime();
            load.drain(5000);
            // Settle: deliveries still in flight; the round ends at the last one (at most 15 s on).
            Settled settled = settle(deliveries, loadEnd, 700_000_000L, 15_000_000_000L);
            long last = settled.deliveries;
            long lastChange = settled.lastChangeNanos;
            Result r = new Result();
            r.puts = load.acked() - p0;
            r.deliveries = last - d0;
            // Deliveries per second of the load window, stretched to the last delivery if the
            // watchers lagged behind (then the rate is what the server sustained).
            r.seconds = (Math.max(loadEnd, lastChange) - start) / 1e9;
            r.deliveriesPerSecond = r.deliveries / r.seconds;
            r.putsPerSecond = r.puts / ((loadEnd - start) / 1e9);
            r.latency = latency == null ? null : latency.getIntervalHistogram();
            processes.forEach((n, pid) -> {
                r.cpuSeconds.put(n, Proc.cpuSeconds(pid) - cpu0.get(n));
                r.rssMiB.put(n, Proc.rssBytes(pid) / (1024.0 * 1024.0));
            });
            return r;
        } finally {
            ticker.interrupt();
            ticker.join();
        }
    }

    /**
     * Round {@code round} of W watchers ({@code t}) fed by {@code load} at {@code rate}: a
     * negative round warms up; otherwise one measured round whose deliveries/s, delivered %,
     * server CPU % and deliveries/server-CPU-s (of the process named {@code node} in
     * {@code processes}) go to {@code row}.
     */
    static void deliveries(
            Load load,
            double rate,
            CommonOptions common,
            int round,
            WatchTarget t,
            int watchers,
            Map<String, Long> processes,
            Figures f,
            String row,
            Progress progress)
            throws InterruptedException {
        if (round < 0) {
            warmUp(load, rate, common.warmup, t::deliveries, progress, row);
            return;
        }
        Result res = run(
                load,
                rate,
                common.duration.toNanos(),
                processes,
                t::deliveries,
                null,
                progress,
                row + " round " + (round + 1) + "/" + common.rounds);
        f.add(row, "deliveries/s", res.deliveriesPerSecond);
        f.add(row, "delivered %", 100.0 * res.deliveries / Math.max(1.0, (double) res.puts * watchers));
        f.add(row, "server CPU %", 100 * res.cores("node"));
        f.add(row, "deliveries/server-CPU-s", res.deliveries / res.cpuSeconds.get("node"));
    }
}
