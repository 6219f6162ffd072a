/**
 * The ingester's side of etcd: {@link io.watchfanout.ingester.etcd.EtcdWatchFeed}, the one watch
 * of the whole keyspace, handed to the publisher thread as
 * {@link io.watchfanout.ingester.etcd.WatchSignal}s through a queue bounded in bytes;
 * {@link io.watchfanout.ingester.etcd.EtcdSnapshotReader}, paginated range reads at one revision
 * (initial load, resync, skipped revisions); {@link io.watchfanout.ingester.etcd.EtcdEvents},
 * the conversion of jetcd's types into the schema's; and the value types
 * {@link io.watchfanout.ingester.etcd.WatchBatch} and
 * {@link io.watchfanout.ingester.etcd.EtcdSnapshot}. The published key prefix is a
 * {@link io.watchfanout.common.KeyRange}.
 *
 * <p>Threads: jetcd's callbacks run on its event-loop threads and only convert and enqueue;
 * everything else is called by the publisher thread.
 *
 * <p>Imports: jetcd, {@code io.watchfanout.schema}'s messages, {@code io.watchfanout.common} and
 * protobuf. No Kafka, no Undertow, and nothing else of the ingester: the other packages use
 * etcd's data through the types defined here.
 */
package io.watchfanout.ingester.etcd;
