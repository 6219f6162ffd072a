/**
 * The ingester: {@link io.watchfanout.ingester.IngesterMain} (the command line),
 * {@link io.watchfanout.ingester.IngesterConfig} (its settings),
 * {@link io.watchfanout.ingester.Ingester} (the parts' lifecycle and the publisher loop, which
 * (re)starts a session after each failure and acts on the failure's kind),
 * {@code PublishSession} (one session: topics, a transactional producer, the start point read
 * back from Kafka, a watch from there + 1, etcd's watch responses through a
 * {@code RevisionAssembler}, whole revisions in Kafka transactions, resyncs after a compaction,
 * rebuilds of revisions the watch skipped, heartbeats; it owns the resume point) and
 * {@code PublishFailures} (the one place that maps Kafka's, etcd's and the ingester's own
 * exceptions to a {@code publish.PublishFailure}: retriable or fatal). The state materializer,
 * the leader election and the dependency probes run beside the publisher.
 *
 * <p>Imports: every package of the ingester, the jetcd client it builds and hands to them, a few
 * Kafka client types (producer settings, errors), gRPC's status (etcd's errors),
 * {@code io.watchfanout.schema}, {@code io.watchfanout.common}, picocli and the Prometheus client. The ingester never imports
 * the fan-out node ({@code io.watchfanout.fanout}); the two share only the schema and the common
 * module, and talk through Kafka.
 *
 * <p>The parts, the invariants they keep and the threads that run them: docs/ARCHITECTURE.md,
 * "Ingester" and "Concurrency model".
 */
package io.watchfanout.ingester;
