package io.watchfanout.fanout.watch;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * What the watch core is configured with (the node's flags of the same names).
 *
 * @param historyMaxEvents events kept in the history window, {@code >= 1} ({@code --history-max-events})
 * @param historyMaxAge age at which events leave the window, {@code >= 1ms} ({@code --history-max-age})
 * @param clockMillis the wall clock of the window's ages, milliseconds since the epoch
 * @param queueFrames frames a live watcher may have waiting before it is parked, {@code >= 1}
 *     ({@code --watcher-queue-frames})
 * @param bookmarkInterval period of Kubernetes watches' BOOKMARK frames and of the check that
 *     ends parked watchers fallen behind the history, {@code >= 1ms} ({@code --bookmark-interval})
 * @param nodeId the node's id, for log lines and thread names
 * @param encodePerWatcher benchmark only ({@code --bench-encode-per-watcher}, {@code bin/bench memo}):
 *     live dispatch encodes each watcher's frame anew instead of sharing the event's memoized one,
 *     so that the benchmark can measure what encode-once saves; never in production
 */
public record CoreSettings(
        int historyMaxEvents,
        Duration historyMaxAge,
        LongSupplier clockMillis,
        int queueFrames,
        Duration bookmarkInterval,
        String nodeId,
        boolean encodePerWatcher) {
    /**
     * The bookmark interval of {@link #of} (the flag's default): kube-apiserver's watch cache sends one
     * about every minute; every 5 s lets a client resume closer to where it was.
     */
    public static final Duration DEFAULT_BOOKMARK_INTERVAL = Duration.ofSeconds(5);

    /**
     * Checks that no field is null. The ranges are the node's flag table's to check
     * ({@code NodeFlags}), once, with messages that name the flag.
     */
    public CoreSettings {
        Objects.requireNonNull(historyMaxAge, "historyMaxAge");
        Objects.requireNonNull(clockMillis, "clockMillis");
        Objects.requireNonNull(bookmarkInterval, "bookmarkInterval");
        Objects.requireNonNull(nodeId, "nodeId");
    }

    /** Settings with the system clock, {@link #DEFAULT_BOOKMARK_INTERVAL} and shared frames. */
    public static CoreSettings of(int historyMaxEvents, Duration historyMaxAge, int queueFrames, String nodeId) {
        return new CoreSettings(
                historyMaxEvents,
                historyMaxAge,
                System::currentTimeMillis,
                queueFrames,
                DEFAULT_BOOKMARK_INTERVAL,
                nodeId,
                false);
    }

    /** These settings with another clock. */
    CoreSettings withClock(LongSupplier clock) {
        return new CoreSettings(
                historyMaxEvents, historyMaxAge, clock, queueFrames, bookmarkInterval, nodeId, encodePerWatcher);
    }

    /** These settings with another bookmark interval. */
    public CoreSettings withBookmarkInterval(Duration interval) {
        return new CoreSettings(
                historyMaxEvents, historyMaxAge, clockMillis, queueFrames, interval, nodeId, encodePerWatcher);
    }

    /** These settings with {@code encodePerWatcher} set (benchmark only). */
    CoreSettings withEncodePerWatcher(boolean perWatcher) {
        return new CoreSettings(
                historyMaxEvents, historyMaxAge, clockMillis, queueFrames, bookmarkInterval, nodeId, perWatcher);
    }
}
