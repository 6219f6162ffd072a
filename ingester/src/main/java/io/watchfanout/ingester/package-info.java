/**
 * The ingester: {@link io.watchfanout.ingester.IngesterMain} (the command line),
 * {@link io.watchfanout.ingester.IngesterConfig} (its settings) and
 * {@link io.watchfanout.ingester.Ingester}, the publisher loop: one thread that owns the resume
 * point, (re)starts a session on any failure (topics, a transactional producer, the start point
 * read back from Kafka, a watch from there + 1), passes etcd's watch responses through a
 * {@code RevisionAssembler}, publishes whole revisions in Kafka transactions, resynchronises
 * after a compaction, rebuilds revisions the watch skipped, and publishes heartbeats. The state
 * materializer, the leader election and the dependency probes run beside it.
 *
 * <p>Imports: every package of the ingester, the jetcd client it builds and hands to them, a few
 * Kafka client types (producer settings, errors), {@code io.watchfanout.schema},
 * {@code io.watchfanout.common}, picocli and the Prometheus client. The ingester never imports
 * the fan-out node ({@code io.watchfanout.fanout}); the two share only the schema and the common
 * module, and talk through Kafka.
 *
 * <p>The parts, the invariants they keep and the threads that run them: docs/ARCHITECTURE.md,
 * "Ingester" and "Concurrency model".
 */
package io.watchfanout.ingester;
