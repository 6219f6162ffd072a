/**
 * The node's Kafka feed: {@link io.watchfanout.fanout.kafka.KafkaCacheLoader} rebuilds the watch
 * cache from {@code <prefix>.state} and tails {@code <prefix>.events} on its own feed thread
 * ({@code assign()}, {@code read_committed}), failing closed on bad data (docs/ARCHITECTURE.md,
 * invariant 8) and reporting a stale feed; {@link io.watchfanout.fanout.kafka.RebuildProgress}
 * is its progress for logs and metrics.
 *
 * <p>Imports: this is the only package of the node that uses the Kafka client library (besides
 * the deserializers of {@code io.watchfanout.schema}). It feeds the cache only through
 * {@code io.watchfanout.fanout.cache}'s {@code CacheFeed} and {@code RecordApplier}, and uses the
 * Prometheus client for its latency histogram; never Undertow, never {@code watch} or
 * {@code http}.
 */
package io.watchfanout.fanout.kafka;
