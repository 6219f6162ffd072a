package io.watchfanout.ingester.ops;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;

/**
 * The ingester's Prometheus metrics (prefix {@code watchfanout_ingester_}). Thread-safe.
 */
public final class IngesterMetrics {
  /** Events published to the events topic (resync entries included). */
  public final Counter eventsPublished;
  /** Progress records published. */
  public final Counter progressRecords;
  /** Resynchronisations published, by reason (initial, compacted). */
  public final Counter resyncs;
  /** Kafka transactions by outcome (commit, abort). */
  public final Counter transactions;
  /** Re-creations of the etcd watch, by reason (error, gap, overflow, kafka). */
  public final Counter watchRestarts;
  /** Every revision up to this one is in the events topic. */
  public final Gauge lastPublishedRevision;
  /** The newest etcd store revision seen in a watch response header. */
  public final Gauge etcdRevision;
  /** etcd's revision minus the last published revision. */
  public final Gauge watchLagRevisions;
  /** Bytes of keys and values waiting between the etcd watch and the publisher. */
  public final Gauge watchQueueBytes;
  /** 1 while publishing from a live watch, else 0. */
  public final Gauge ready;

  /** Registers the metrics in {@code registry}. */
  public IngesterMetrics(CollectorRegistry registry) {
    eventsPublished = Counter.build("watchfanout_ingester_events_published_total",
        "Events published to the events topic (resync entries included).").register(registry);
    progressRecords = Counter.build("watchfanout_ingester_progress_records_total",
        "Progress records published to the events topic.").register(registry);
    resyncs = Counter.build("watchfanout_ingester_resyncs_total",
        "Resynchronisations published, by reason.").labelNames("reason").register(registry);
    transactions = Counter.build("watchfanout_ingester_transactions_total",
        "Kafka transactions of the publisher, by outcome.").labelNames("outcome").register(registry);
    watchRestarts = Counter.build("watchfanout_ingester_watch_restarts_total",
        "Re-creations of the etcd watch, by reason.").labelNames("reason").register(registry);
    lastPublishedRevision = Gauge.build("watchfanout_ingester_last_published_revision",
        "Every etcd revision up to this one is in the events topic.").register(registry);
    etcdRevision = Gauge.build("watchfanout_ingester_etcd_revision",
        "Newest etcd store revision seen in a watch response.").register(registry);
    watchLagRevisions = Gauge.build("watchfanout_ingester_watch_lag_revisions",
        "etcd revision minus the last published revision.").register(registry);
    watchQueueBytes = Gauge.build("watchfanout_ingester_watch_queue_bytes",
        "Bytes of keys and values waiting between the etcd watch and the publisher.").register(registry);
    ready = Gauge.build("watchfanout_ingester_ready",
        "1 while the ingester publishes from a live etcd watch.").register(registry);
  }
}
