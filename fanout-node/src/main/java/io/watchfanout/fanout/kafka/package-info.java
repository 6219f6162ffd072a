/**
 * The node's Kafka feed: {@link io.watchfanout.fanout.kafka.KafkaCacheLoader} rebuilds the watch
 * cache from {@code <prefix>.state} and tails {@code <prefix>.events} on its own feed thread
 * ({@code assign()}, {@code read_committed}), failing closed on bad data (docs/ARCHITECTURE.md,
 * invariant 8) and reporting a stale feed; {@link io.watchfanout.fanout.kafka.RebuildProgress}
 * is its progress for logs and metrics; {@link io.watchfanout.fanout.kafka.RecordApplier} turns
 * events-topic records into whole-revision updates after checking them against the schema's
 * {@code RevisionChain}; {@link io.watchfanout.fanout.kafka.KafkaHistory} serves older history
 * from the events topic; {@link io.watchfanout.fanout.kafka.StateValueDeserializer} parses state
 * records into the cache's value arena.
 *
 * <p>Imports: this is the only package of the node that uses the Kafka client library (besides
 * the deserializers of {@code io.watchfanout.schema}). It feeds the watch core only through
 * {@code io.watchfanout.fanout.watch}'s {@code CacheFeed} and serves it through its
 * {@code OlderHistory}, and uses the Prometheus client for its latency histogram; never Undertow,
 * never a front end ({@code http}, {@code etcd}).
 */
package io.watchfanout.fanout.kafka;
