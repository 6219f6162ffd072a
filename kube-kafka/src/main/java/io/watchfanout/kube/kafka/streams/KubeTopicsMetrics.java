package io.watchfanout.kube.kafka.streams;

import io.watchfanout.kube.kafka.DecodeResult;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the Kubernetes topics application counts: events written, records skipped, values that
 * could not be decoded (by reason), the etcd revision and ingester time of the last record
 * processed, and the newest revision in the events topic, from which {@code /metrics} reports how
 * far behind the ingester it is (in seconds and in revisions).
 *
 * <p>Thread-safe: updated by every stream thread, read by the metrics endpoint.
 */
public final class KubeTopicsMetrics {
    private final LongAdder events = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    private final Map<DecodeResult.Reason, LongAdder> undecodable = new EnumMap<>(DecodeResult.Reason.class);
    private final AtomicLong revision = new AtomicLong();
    private final AtomicLong recordTimeMillis = new AtomicLong();
    private final AtomicLong newestRevision = new AtomicLong();

    /** Counters at zero. */
    public KubeTopicsMetrics() {
        for (DecodeResult.Reason r : DecodeResult.Reason.values()) {
            undecodable.put(r, new LongAdder());
        }
    }

    void written() {
        events.increment();
    }

    void skipped() {
        skipped.increment();
    }

    void countUndecodable(DecodeResult.Reason reason) {
        undecodable.get(reason).increment();
    }

    /** Takes note of a processed record's revision (0: none) and timestamp (epoch milliseconds). */
    void processed(long recordRevision, long timestampMillis) {
        revision.accumulateAndGet(recordRevision, Math::max);
        recordTimeMillis.accumulateAndGet(timestampMillis, Math::max);
    }

    /** Takes note of the newest revision read from the events topic's end (0: none found). */
    void newestInTopic(long topicRevision) {
        newestRevision.accumulateAndGet(topicRevision, Math::max);
    }

    /** Watch events written to change topics. */
    public long events() {
        return events.sum();
    }

    /** Records that carry no object (progress, resync markers, keys of no resource, excluded resources). */
    public long skippedRecords() {
        return skipped.sum();
    }

    /** Values that could not be decoded for {@code reason}, each written to the errors topic. */
    public long undecodable(DecodeResult.Reason reason) {
        return undecodable.get(reason).sum();
    }

    /** The highest etcd revision processed, 0 before the first. */
    public long revision() {
        return revision.get();
    }

    /** The newest etcd revision seen at the events topic's end, 0 before the first read found one. */
    public long newestRevision() {
        return newestRevision.get();
    }

    /**
     * Revisions the application is behind the events topic: the newest revision at the topic's
     * end minus the highest processed, at least 0; NaN before the topic's end was read.
     */
    public double lagRevisions() {
        long newest = newestRevision();
        return newest == 0 ? Double.NaN : Math.max(0, newest - revision());
    }

    /** The newest events-topic record timestamp processed (when the ingester received it), epoch ms; 0 before the first. */
    public long recordTimeMillis() {
        return recordTimeMillis.get();
    }

    /** The counters in Prometheus' text format, with {@code nowMillis} for the lag in seconds. */
    public String prometheusText(long nowMillis) {
        StringBuilder out = new StringBuilder(1024);
        out.append("# HELP watchfanout_kube_events_total Watch events written to the change topics.\n")
                .append("# TYPE watchfanout_kube_events_total counter\n")
                .append("watchfanout_kube_events_total ")
                .append(events())
                .append('\n');
        out.append("# HELP watchfanout_kube_skipped_total Events-topic records that carry no object published.\n")
                .append("# TYPE watchfanout_kube_skipped_total counter\n")
                .append("watchfanout_kube_skipped_total ")
                .append(skippedRecords())
                .append('\n');
        out.append("# HELP watchfanout_kube_undecodable_total Values written to the errors topic, by reason.\n")
                .append("# TYPE watchfanout_kube_undecodable_total counter\n");
        for (DecodeResult.Reason r : DecodeResult.Reason.values()) {
            out.append("watchfanout_kube_undecodable_total{reason=\"")
                    .append(r.name().toLowerCase(Locale.ROOT))
                    .append("\"} ")
                    .append(undecodable(r))
                    .append('\n');
        }
        out.append("# HELP watchfanout_kube_revision The highest etcd revision processed.\n")
                .append("# TYPE watchfanout_kube_revision gauge\n")
                .append("watchfanout_kube_revision ")
                .append(revision())
                .append('\n');
        out.append("# HELP watchfanout_kube_newest_revision The newest etcd revision at the events topic's end "
                        + "(read every few seconds; 0 before the first).\n")
                .append("# TYPE watchfanout_kube_newest_revision gauge\n")
                .append("watchfanout_kube_newest_revision ")
                .append(newestRevision())
                .append('\n');
        double lag = lagRevisions();
        out.append("# HELP watchfanout_kube_lag_revisions The newest revision in the events topic minus the highest "
                        + "processed; NaN before the topic's end was read.\n")
                .append("# TYPE watchfanout_kube_lag_revisions gauge\n")
                .append("watchfanout_kube_lag_revisions ")
                .append(Double.isNaN(lag) ? "NaN" : Long.toString((long) lag))
                .append('\n');
        long time = recordTimeMillis();
        out.append(
                        "# HELP watchfanout_kube_lag_seconds Seconds between now and when the ingester received the "
                                + "last record processed (0 before the first; the ingester's progress records keep it current while etcd is idle).\n")
                .append("# TYPE watchfanout_kube_lag_seconds gauge\n")
                .append("watchfanout_kube_lag_seconds ")
                .append(time == 0 ? 0.0 : Math.max(0, nowMillis - time) / 1000.0)
                .append('\n');
        return out.toString();
    }
}
