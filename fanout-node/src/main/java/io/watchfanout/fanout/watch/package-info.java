/**
 * The watch core, independent of any transport, in one package as Kubernetes' cacher is. Its
 * public surface is what a front end and the feed need, and nothing else
 * ({@code WatchSurfaceTest} keeps it to this list):
 *
 * <ul>
 *   <li>a front end's entry: {@link io.watchfanout.fanout.watch.WatchCore} (open a watch, list at a
 *       revision, wait for a revision, readiness and status), its outcomes
 *       {@link io.watchfanout.fanout.watch.Opening} and {@link io.watchfanout.fanout.watch.Arrival},
 *       {@link io.watchfanout.fanout.watch.WatchSpec} with {@link io.watchfanout.fanout.watch.WatchSelector}
 *       and {@link io.watchfanout.fanout.watch.BookmarkFrames} (what is watched, selected, and how
 *       a bookmark reads), {@link io.watchfanout.fanout.watch.Watch} (the handle a transport pulls
 *       frames from), {@link io.watchfanout.fanout.watch.WatchSink} (what a transport implements to
 *       be woken), {@link io.watchfanout.fanout.watch.WakeUps} (its wake-ups coalesced per serving
 *       thread), {@link io.watchfanout.fanout.watch.CloseReason};
 *   <li>reads: {@link io.watchfanout.fanout.watch.ListPage}, {@link io.watchfanout.fanout.watch.StateEntry},
 *       {@link io.watchfanout.fanout.watch.CurrentRevision},
 *       {@link io.watchfanout.fanout.watch.HistoryExpiredException};
 *   <li>the node's state for probes and metrics: {@link io.watchfanout.fanout.watch.Readiness},
 *       {@link io.watchfanout.fanout.watch.NodeStatus}, {@link io.watchfanout.fanout.watch.WatchStats},
 *       {@link io.watchfanout.fanout.watch.Statuses} (the statuses of the core's own refusals and
 *       ERROR frames), {@link io.watchfanout.fanout.watch.CoreSettings};
 *   <li>the feed side, for the Kafka package: {@link io.watchfanout.fanout.watch.CacheFeed},
 *       {@link io.watchfanout.fanout.watch.PreloadedRevision}, {@link io.watchfanout.fanout.watch.ValueArena},
 *       {@link io.watchfanout.fanout.watch.OlderHistory} and its
 *       {@link io.watchfanout.fanout.watch.TooManyReadsException}.
 * </ul>
 *
 * <p>Package-private machinery, each class named for its job: {@code Dispatcher} (the feed
 * thread: cache, index of live watchers, dispatch, parking, resyncs, failures), {@code Watcher}
 * (one stream's passive state), {@code CatchUp} (a transport's pull: initial events and catch-up
 * from the window or older history), {@code RevisionWaiters}, {@code BookmarkTimer} (bookmarks,
 * progress notifications, expiry of parked watchers), {@code Expiry} (every 410),
 * {@code Watchers} (the registry), {@code WatchCache} and {@code HistoryWindow} (the state and
 * the recent events), over the common {@code RangeIndex} (values by key range).
 *
 * <p>Locks: the core's lock ({@code Dispatcher.lock}), then a watcher's monitor
 * (docs/ARCHITECTURE.md, "Concurrency model"). Nothing here writes to a socket or blocks on a
 * client.
 *
 * <p>Imports: {@code io.watchfanout.fanout.frame} (a cached event carries its frames),
 * {@code io.watchfanout.common}'s key range, {@code io.watchfanout.schema}'s messages, the
 * revision chain and protobuf. Neither Undertow, XNIO, grpc nor Kafka, nor any front end of the
 * node ({@code build/import-control.xml} enforces it).
 */
package io.watchfanout.fanout.watch;
