/**
 * From etcd's watch to the events topic: {@link io.watchfanout.ingester.publish.RevisionAssembler}
 * (dense-revision check, prefix filter, {@code index}/{@code count}, {@code prev_revision}
 * chaining, progress and heartbeat records), {@link io.watchfanout.ingester.publish.EventsPublisher}
 * (one Kafka transaction per batch of whole revisions, with the ingester's
 * {@code transactional.id}; a commit that timed out is waited for again while its
 * {@link io.watchfanout.ingester.publish.CommitRetry} allows), {@link io.watchfanout.ingester.publish.PublishedLog} (what was
 * published, read back from both topics), {@link io.watchfanout.ingester.publish.Resynchronizer}
 * (the records of a resync), {@link io.watchfanout.ingester.publish.SkippedRevision} (a
 * revision the watch skipped, rebuilt from range reads) and
 * {@link io.watchfanout.ingester.publish.PublishFailure} (how a publish session ended: retriable
 * or fatal).
 *
 * <p>Not thread-safe unless a class says so: everything stateful here belongs to the publisher
 * thread.
 *
 * <p>Imports: the Kafka client library (the producer; consumers through
 * {@code io.watchfanout.ingester.topics.TopicReader}), {@code io.watchfanout.schema}, {@code io.watchfanout.common}'s
 * {@code KeyRange} and the data types of {@code io.watchfanout.ingester.etcd} ({@code WatchBatch},
 * {@code EtcdSnapshot}). Never jetcd itself, never Undertow.
 */
package io.watchfanout.ingester.publish;
