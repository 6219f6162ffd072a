package io.watchfanout.ingester.ops;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;

/**
 * The ingester's Prometheus metrics (prefix {@code watchfanout_ingester_}). Thread-safe.
 */
public final class IngesterMetrics {
    /** Buckets of {@code watchfanout_event_latency_seconds}, the same on the fan-out node. */
    public static final double[] LATENCY_BUCKETS = {
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
    };

    /** Events published to the events topic (resync entries included). */
    public final Counter eventsPublished;
    /** Progress records published (heartbeats included). */
    public final Counter progressRecords;
    /** Heartbeats published: progress records at an unchanged revision. */
    public final Counter heartbeats;
    /** Resynchronisations published, by reason (initial, compacted). */
    public final Counter resyncs;
    /** Kafka transactions by outcome (commit, abort). */
    public final Counter transactions;
    /** Re-creations of the etcd watch, by reason (error, gap, overflow, kafka). */
    public final Counter watchRestarts;
    /** Revisions the etcd watch skipped twice, by outcome (rebuilt from range reads, resync). */
    public final Counter skippedRevisions;
    /** Every revision up to this one is in the events topic. */
    public final Gauge lastPublishedRevision;
    /** The newest etcd store revision seen in a watch response header. */
    public final Gauge etcdRevision;
    /** etcd's revision minus the last published revision. */
    public final Gauge watchLagRevisions;
    /** Bytes of keys and values waiting between the etcd watch and the publisher. */
    public final Gauge watchQueueBytes;
    /** 1 while the last probe of a dependency (etcd, kafka) succeeded, else 0. */
    public final Gauge dependencyUp;
    /** Seconds from an event's arrival from etcd to a stage ({@code appended}: committed to Kafka). */
    public final Histogram eventLatency;
    /** 1 while publishing from a live watch, else 0. */
    public final Gauge ready;
    /** Digests of the watched range published in progress records. */
    public final Counter digestsPublished;
    /** Digest reads that failed, by reason ({@code compacted}, {@code error}). */
    public final Counter digestFailures;
    /** What digests cost etcd: range requests ({@code pages}) and key-values read ({@code keys}). */
    public final Counter digestReads;
    /** Seconds each digest read took, pauses between pages included. */
    public final Histogram digestSeconds;

    /** Registers the metrics in {@code registry}. */
    public IngesterMetrics(CollectorRegistry registry) {
        eventsPublished = Counter.build(
                        "watchfanout_ingester_events_published_total",
                        "Events published to the events topic (resync entries included).")
                .register(registry);
        progressRecords = Counter.build(
                        "watchfanout_ingester_progress_records_total",
                        "Progress records published to the events topic.")
                .register(registry);
        heartbeats = Counter.build(
                        "watchfanout_ingester_heartbeats_total",
                        "Heartbeats published: progress records that show the feed is alive while etcd is idle.")
                .register(registry);
        resyncs = Counter.build("watchfanout_ingester_resyncs_total", "Resynchronisations published, by reason.")
                .labelNames("reason")
                .register(registry);
        transactions = Counter.build(
                        "watchfanout_ingester_transactions_total", "Kafka transactions of the publisher, by outcome.")
                .labelNames("outcome")
                .register(registry);
        watchRestarts = Counter.build(
                        "watchfanout_ingester_watch_restarts_total", "Re-creations of the etcd watch, by reason.")
                .labelNames("reason")
                .register(registry);
        skippedRevisions = Counter.build(
                        "watchfanout_ingester_skipped_revisions_total",
                        "Revisions the etcd watch skipped twice (etcd issue 18089), by outcome: rebuilt from range reads, or resync.")
                .labelNames("outcome")
                .register(registry);
        lastPublishedRevision = Gauge.build(
                        "watchfanout_ingester_last_published_revision",
                        "Every etcd revision up to this one is in the events topic.")
                .register(registry);
        etcdRevision = Gauge.build(
                        "watchfanout_ingester_etcd_revision",
                        "etcd's revision at the last probe or watch response; NaN while etcd cannot be reached.")
                .register(registry);
        watchLagRevisions = Gauge.build(
                        "watchfanout_ingester_watch_lag_revisions",
                        "etcd revision minus the last published revision; NaN while etcd cannot be reached.")
                .register(registry);
        watchQueueBytes = Gauge.build(
                        "watchfanout_ingester_watch_queue_bytes",
                        "Bytes of keys and values waiting between the etcd watch and the publisher.")
                .register(registry);
        dependencyUp = Gauge.build(
                        "watchfanout_ingester_dependency_up",
                        "1 while the last probe of the dependency answered in time, else 0.")
                .labelNames("dependency")
                .register(registry);
        eventLatency = Histogram.build(
                        "watchfanout_event_latency_seconds",
                        "Seconds from an event's arrival from etcd at the ingester to a stage: appended (committed to Kafka).")
                .labelNames("stage")
                .buckets(LATENCY_BUCKETS)
                .register(registry);
        ready = Gauge.build("watchfanout_ingester_ready", "1 while the ingester publishes from a live etcd watch.")
                .register(registry);
        digestsPublished = Counter.build(
                        "watchfanout_ingester_digests_total",
                        "Digests of the watched range (key count and hash at a revision) published in progress records.")
                .register(registry);
        digestFailures = Counter.build(
                        "watchfanout_ingester_digest_failures_total",
                        "Digest reads given up, by reason: compacted (etcd compacted the revision meanwhile) or error.")
                .labelNames("reason")
                .register(registry);
        digestReads = Counter.build(
                        "watchfanout_ingester_digest_reads_total",
                        "What digests read from etcd: range requests (unit=pages) and key-values (unit=keys).")
                .labelNames("unit")
                .register(registry);
        digestSeconds = Histogram.build(
                        "watchfanout_ingester_digest_seconds",
                        "Seconds a digest read took, pauses between pages included.")
                .buckets(0.01, 0.1, 1, 10, 60, 300, 1800)
                .register(registry);
    }
}
