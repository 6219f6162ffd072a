/**
 * Watch frames: the mapping of etcd events to {@code WatchEvent}s and their encodings
 * ({@link io.watchfanout.fanout.frame.Encoding}: JSON lines, delimited protobuf, Server-Sent
 * Events). {@link io.watchfanout.fanout.frame.FrameEncoder} builds read-only direct buffers and
 * counts every encode; {@link io.watchfanout.fanout.frame.CachedEvent} is an event of the history
 * window with its frames memoized ({@code FrameMemo}), built at most once per encoding and shared
 * by every watcher (docs/ARCHITECTURE.md, invariant 6); {@link io.watchfanout.fanout.frame.ProtoJson}
 * prints proto3 JSON by hand and {@link io.watchfanout.fanout.frame.SseFrames} wraps it as SSE
 * events.
 *
 * <p>The encoder, cached events and their memos are thread-safe ({@code JsonBuffer} is one
 * encoding call's scratch buffer); a {@code FrameMemo}'s monitor is the innermost lock of the
 * node (docs/ARCHITECTURE.md, "Concurrency model").
 *
 * <p>Imports: {@code io.watchfanout.schema}'s generated messages and protobuf only; nothing else
 * of the node, no Undertow, no Kafka.
 */
package io.watchfanout.fanout.frame;
