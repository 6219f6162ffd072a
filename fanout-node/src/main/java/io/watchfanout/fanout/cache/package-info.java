/**
 * The watch cache: the node's copy of the published etcd range at one revision.
 * {@link io.watchfanout.fanout.cache.WatchCache} holds the current state (ordered by key, for
 * range reads and paged lists at a past revision) and the {@code HistoryWindow} of recent
 * events; {@link io.watchfanout.fanout.cache.RecordApplier} turns events-topic records into
 * whole-revision updates of a {@link io.watchfanout.fanout.cache.CacheFeed} after checking them
 * against the schema's {@code RevisionChain}. The key range of a watch or a list is the common
 * module's {@link io.watchfanout.common.KeyRange}.
 *
 * <p>Nothing here locks: the watch hub ({@code io.watchfanout.fanout.watch}) calls the cache
 * under its lock, a {@code RecordApplier} belongs to the feed thread, and the value classes
 * ({@code StateEntry}, {@code ListPage}, {@code HistoryRead}) are immutable.
 *
 * <p>Imports: {@code io.watchfanout.fanout.frame} (a cached event carries its frames),
 * {@code io.watchfanout.schema} (records and the revision chain), {@code io.watchfanout.common}
 * (printable keys, key ranges) and protobuf. Neither Undertow nor the Kafka client library: the cache knows
 * neither its transport nor where its records come from.
 */
package io.watchfanout.fanout.cache;
