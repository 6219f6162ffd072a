package io.watchfanout.schema;

import java.time.Duration;
import java.util.Locale;
import java.util.function.LongSupplier;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The one rule that decides whether a read of the compacted state topic from its beginning gives
 * a valid snapshot: every reader that builds a snapshot from {@code <prefix>.state} (a fan-out
 * node's rebuild, the ingester's resynchronisation, the tests' helpers) times its read with one
 * of these and drops what it read when {@link #trustworthy()} says no.
 *
 * <p><b>Why.</b> Kafka's contract for a compacted topic is that a reader starting at its first
 * offset sees the final state only if it reaches the end within the topic's
 * {@code delete.retention.ms} (D). A read that takes longer can see a key's value, then find that
 * the cleaner removed the key's tombstone (and kept a later record, e.g. a newer checkpoint)
 * before the read reached it: the deleted key would stay in the snapshot for good.
 *
 * <p><b>The condition.</b> Say the read sends its first fetch at wall time S and receives its
 * last records at F. A key it kept wrongly had a value the read received at some V ≥ S, and a
 * tombstone the cleaner removed at some R &lt; F. The cleaner drops a key's older values in the
 * same pass that first cleans the key's tombstone (at C, which also stamps the tombstone's batch
 * with its delete horizon C + D), so the value was still readable at V only if V &lt; C; and the
 * tombstone goes no earlier than C + D. Hence R ≥ C + D &gt; V + D ≥ S + D, and R &lt; F needs
 * F − S &gt; D. A read with F − S ≤ D is therefore safe. This rule is stricter: the read is
 * trusted only while F − S stays under <b>half</b> of D ({@link #budget()}). The half covers what
 * the argument above leaves out: the cleaner takes its clock when a pass starts and rewrites a
 * large segment for a while after, a fetch may read a segment file the cleaner is replacing, and
 * the brokers' clocks are not the reader's. At the default D of a day a read has twelve hours.
 *
 * <p><b>Clocks.</b> The elapsed time is the larger of the monotonic clock's and the wall clock's:
 * a process stopped with SIGSTOP or throttled counts (both clocks run on), and so does a
 * suspended VM (whose monotonic clock may stop while the brokers' clocks do not); a wall clock
 * stepped back counts for nothing.
 *
 * <p>D is the topic's effective {@code delete.retention.ms} (the topic's override, else the
 * broker's {@code log.cleaner.delete.retention.ms}, as Kafka's {@code DescribeConfigs} of the
 * topic answers); a reader learns it before
 * it reads and again when it is done ({@link #retentionNow}), and the shorter of the two counts,
 * so that an operator who shortens it meanwhile is heeded.
 *
 * <p>Not thread-safe: one reader's thread.
 */
public final class StateScan {
    private final LongSupplier nanoClock;
    private final LongSupplier wallClock;
    private final long startNanos;
    private final long startMillis;
    private Duration deleteRetention;

    private StateScan(Duration deleteRetention, LongSupplier nanoClock, LongSupplier wallClock) {
        if (deleteRetention.isNegative()) {
            throw new IllegalArgumentException("delete.retention.ms must not be negative: " + deleteRetention);
        }
        this.deleteRetention = deleteRetention;
        this.nanoClock = nanoClock;
        this.wallClock = wallClock;
        this.startNanos = nanoClock.getAsLong();
        this.startMillis = wallClock.getAsLong();
    }

    /**
     * Starts timing a read: call it right before the read's first fetch of the state topic (an
     * earlier start only makes the rule stricter).
     *
     * @param deleteRetention the state topic's effective {@code delete.retention.ms}
     * @throws IllegalArgumentException if it is negative
     */
    public static StateScan begin(Duration deleteRetention) {
        return begin(deleteRetention, System::nanoTime, System::currentTimeMillis);
    }

    /** As {@link #begin(Duration)}, with the clocks given (nanoseconds, epoch milliseconds); for tests. */
    static StateScan begin(Duration deleteRetention, LongSupplier nanoClock, LongSupplier wallClock) {
        return new StateScan(deleteRetention, nanoClock, wallClock);
    }

    /**
     * Takes the topic's {@code delete.retention.ms} as learnt again (e.g. at the end of the read):
     * the shorter of it and the one known so far counts from now on.
     */
    public void retentionNow(Duration latest) {
        if (latest.compareTo(deleteRetention) < 0) {
            deleteRetention = latest;
        }
    }

    /** The shortest {@code delete.retention.ms} seen since the read started. */
    public Duration deleteRetention() {
        return deleteRetention;
    }

    /** How long the read may take and still be trusted: half of {@link #deleteRetention()}. */
    public Duration budget() {
        return deleteRetention.dividedBy(2);
    }

    /** Time since {@link #begin}: the larger of the monotonic and the wall clock's, never negative. */
    public Duration elapsed() {
        long monotonic = Math.max(0, nanoClock.getAsLong() - startNanos) / 1_000_000;
        long wall = wallClock.getAsLong() - startMillis;
        return Duration.ofMillis(Math.max(monotonic, wall));
    }

    /**
     * Whether what was read so far may be trusted: the read has taken less than {@link #budget()}.
     * Call it once the read has reached the end (and may call it on the way, to give up early).
     */
    public boolean trustworthy() {
        return elapsed().compareTo(budget()) < 0;
    }

    /**
     * Why a read that is no longer {@link #trustworthy()} is dropped, for log lines and
     * {@code /readyz}: the topic, the time the read took (and, when it stopped short, the time the
     * whole read would take at its pace) and the setting.
     *
     * @param topic the state topic
     * @param fractionRead how much of the topic was read, 0..1 (1 when it reached the end)
     */
    public String outlived(String topic, double fractionRead) {
        Duration elapsed = elapsed();
        StringBuilder s =
                new StringBuilder("the read of ").append(topic).append(" took ").append(seconds(elapsed));
        if (fractionRead < 1) {
            s.append(" for ").append(Math.round(fractionRead * 100)).append(" % of it");
            if (fractionRead > 0) {
                s.append(" (about ")
                        .append(seconds(Duration.ofMillis((long) (elapsed.toMillis() / fractionRead))))
                        .append(" for all of it)");
            }
        }
        return s.append(", not less than half of its ")
                .append(TopicConfig.DELETE_RETENTION_MS_CONFIG)
                .append('=')
                .append(deleteRetention.toMillis())
                .append(" (")
                .append(seconds(deleteRetention))
                .append("): the cleaner may have removed a tombstone it had not reached yet, and a deleted key "
                        + "could come back")
                .toString();
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }
}
