package io.watchfanout.ingester.publish;

import io.watchfanout.common.KeyRange;
import io.watchfanout.ingester.etcd.EtcdDigestReader;
import io.watchfanout.ingester.ops.IngesterMetrics;
import io.watchfanout.schema.v1.StateDigest;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a digest of the watched range every {@code interval} on a thread of its own, at the last
 * revision the ingester has published, and hands it to the publisher thread ({@link #take}),
 * which puts it on a progress record ({@link RevisionAssembler#digest}). The read is paced by the
 * {@link EtcdDigestReader}'s page size and pause, so that etcd barely notices; the next read
 * starts {@code interval} after the last one ended. A revision compacted during a read is given
 * up and read again at the next interval.
 *
 * <p>Thread-safe: the schedule's thread produces, the publisher thread takes.
 */
public final class DigestSchedule implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DigestSchedule.class);
    /** Keys per sub-range of a digest: fine enough to name where a reader differs, ~1/1000 of the range's size. */
    public static final int KEYS_PER_RANGE = 1000;

    /**
     * How digests are read ({@code --digest-interval}, {@code --digest-page-size},
     * {@code --digest-page-pause}).
     *
     * @param interval time between the end of one read and the start of the next; zero: no digests
     * @param pageSize keys per range request, {@code > 0}
     * @param pagePause pause between two range requests, {@code >= 0}
     */
    public record Settings(Duration interval, int pageSize, Duration pagePause) {
        /** No digests. */
        public static final Settings OFF = new Settings(Duration.ZERO, 1000, Duration.ZERO);

        /** Whether digests are read at all. */
        public boolean enabled() {
            return !interval.isZero();
        }
    }

    private final EtcdDigestReader reader;
    private final KeyRange range;
    private final LongSupplier publishedRevision;
    private final IngesterMetrics metrics;
    private final AtomicReference<StateDigest> ready = new AtomicReference<>();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "digest");
        t.setDaemon(true);
        return t;
    });
    private long pagesCounted;
    private long keysCounted;

    /**
     * Starts reading: the first digest {@code interval} from now.
     *
     * @param interval time between the end of one read and the start of the next, {@code > 0}
     * @param reader what reads etcd
     * @param range the watched range
     * @param publishedRevision the last revision the ingester published (0 before the first)
     * @param metrics where the cost and outcomes are counted
     */
    public DigestSchedule(
            Duration interval,
            EtcdDigestReader reader,
            KeyRange range,
            LongSupplier publishedRevision,
            IngesterMetrics metrics) {
        if (interval.isZero() || interval.isNegative()) {
            throw new IllegalArgumentException("digest interval " + interval);
        }
        this.reader = reader;
        this.range = range;
        this.publishedRevision = publishedRevision;
        this.metrics = metrics;
        thread.scheduleWithFixedDelay(this::readOne, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The digest read last, once: empty when none is waiting. */
    public Optional<StateDigest> take() {
        return Optional.ofNullable(ready.getAndSet(null));
    }

    private void readOne() {
        long revision = publishedRevision.getAsLong();
        if (revision <= 0) {
            return;
        }
        long start = System.nanoTime();
        try {
            StateDigest digest = reader.read(range, revision);
            ready.set(digest);
            log.debug(
                    "[revision {}] digest of {} keys read in {} ms",
                    revision,
                    digest.getKeyCount(),
                    (System.nanoTime() - start) / 1_000_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            boolean compacted = String.valueOf(e.getMessage()).contains("compacted");
            metrics.digestFailures.labels(compacted ? "compacted" : "error").inc();
            log.info("[revision {}] digest read given up: {}", revision, e.getMessage());
        } catch (Exception e) {
            metrics.digestFailures.labels("error").inc();
            log.info("[revision {}] digest read given up: {}", revision, e.toString());
        } finally {
            metrics.digestSeconds.observe((System.nanoTime() - start) / 1e9);
            long pages = reader.pagesRead();
            long keys = reader.keysRead();
            metrics.digestReads.labels("pages").inc(pages - pagesCounted);
            metrics.digestReads.labels("keys").inc(keys - keysCounted);
            pagesCounted = pages;
            keysCounted = keys;
        }
    }

    /** Stops reading; a read under way is interrupted. */
    @Override
    public void close() {
        thread.shutdownNow();
    }
}
