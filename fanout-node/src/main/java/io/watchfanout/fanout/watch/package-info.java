/**
 * Watches, independent of their transport: {@link io.watchfanout.fanout.watch.WatchHub} owns the
 * cache, the {@code RangeIndex} of live watchers and the dispatch of each revision;
 * {@link io.watchfanout.fanout.watch.Watcher} is one stream (initial events, catching up from
 * history, live, ending) with a bounded queue of shared frames;
 * {@link io.watchfanout.fanout.watch.WatchSink} is what a transport implements to be woken and to
 * pull frames; {@link io.watchfanout.fanout.watch.RevisionWaiter} lets a request wait for a
 * revision; {@link io.watchfanout.fanout.watch.Statuses} are the API's error statuses and
 * {@link io.watchfanout.fanout.watch.WatchStats} its counters.
 *
 * <p>Locks: the hub's lock, then a watcher's monitor (docs/ARCHITECTURE.md, "Concurrency model").
 * Nothing here writes to a socket or blocks on a client.
 *
 * <p>Imports: {@code io.watchfanout.fanout.cache}, {@code io.watchfanout.fanout.frame},
 * {@code io.watchfanout.schema}'s messages and protobuf. Neither Undertow nor Kafka.
 */
package io.watchfanout.fanout.watch;
