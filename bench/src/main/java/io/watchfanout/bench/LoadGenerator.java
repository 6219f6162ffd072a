package io.watchfanout.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;

/**
 * Writes to etcd: PUTs of {@code valueBytes} values under {@code prefix}, each value starting
 * with the send time ({@link LatencyStamp}), either at a fixed rate (open loop: a put is due
 * every 1/rate seconds whatever the answers; if the writer falls behind it sends at once and
 * the late sends count in {@link #lateSends()}) or as fast as etcd acknowledges with
 * {@code maxInFlight} puts outstanding ({@code rate <= 0}).
 *
 * <p>Thread-safety: {@link #run} on one thread; counters from any.
 */
final class LoadGenerator implements Load {
    private final KV kv;
    private final String prefix;
    private final int keys;
    private final byte[] filler;
    private final Semaphore inFlight;
    private final int maxInFlight;
    private final LongAdder acked = new LongAdder();
    private final LongAdder failed = new LongAdder();
    /** The first put etcd refused, for the error that stops the run. */
    private final AtomicReference<Throwable> firstFailure = new AtomicReference<>();

    private final LongAdder late = new LongAdder();
    private final Recorder putLatency = new Recorder(TimeUnit.SECONDS.toMicros(60), 3);
    private long sent;

    LoadGenerator(Client client, String prefix, int keys, int valueBytes, int maxInFlight) {
        this.kv = client.getKVClient();
        this.prefix = prefix;
        this.keys = keys;
        this.filler = new byte[Math.max(8, valueBytes)];
        Random r = new Random(1);
        for (int i = 0; i < filler.length; i++) {
            filler[i] = (byte) ('a' + r.nextInt(26));
        }
        this.inFlight = new Semaphore(maxInFlight);
        this.maxInFlight = maxInFlight;
    }

    /** Puts for {@code durationNanos}; {@code rate <= 0} is as fast as etcd takes them. */
    @Override
    public void run(double rate, long durationNanos) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + durationNanos;
        long i = 0;
        while (true) {
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            if (rate > 0) {
                long due = start + (long) (i * 1e9 / rate);
                if (due > now) {
                    long sleep = due - now;
                    TimeUnit.NANOSECONDS.sleep(Math.min(sleep, end - now));
                    continue;
                }
                if (now - due > 5_000_000L) {
                    late.increment();
                }
            }
            if (!inFlight.tryAcquire(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                break;
            }
            ByteSequence key = ByteSequence.from(prefix + "k-" + (i % keys), StandardCharsets.UTF_8);
            long stamp = System.nanoTime();
            ByteSequence value = ByteSequence.from(LatencyStamp.value(stamp, filler));
            kv.put(key, value).whenComplete((r, e) -> {
                inFlight.release();
                if (e == null) {
                    acked.increment();
                    putLatency.recordValue(Math.max(0, (System.nanoTime() - stamp) / 1000));
                } else {
                    failed.increment();
                    firstFailure.compareAndSet(null, e);
                }
            });
            i++;
            sent++;
        }
    }

    /**
     * Waits up to {@code millis} for outstanding puts.
     *
     * @throws IllegalStateException when etcd has refused a put: a round whose puts fail (etcd's
     *     quota exceeded, say) measures nothing and must not enter a median as a low figure
     */
    @Override
    public void drain(long millis) throws InterruptedException {
        if (inFlight.tryAcquire(maxInFlight, millis, TimeUnit.MILLISECONDS)) {
            inFlight.release(maxInFlight);
        }
        Throwable failure = firstFailure.get();
        if (failure != null) {
            throw new IllegalStateException(failed.sum() + " puts failed; the first: " + failure, failure);
        }
    }

    long sent() {
        return sent;
    }

    @Override
    public long acked() {
        return acked.sum();
    }

    long failed() {
        return failed.sum();
    }

    long lateSends() {
        return late.sum();
    }

    Recorder putLatency() {
        return putLatency;
    }
}
