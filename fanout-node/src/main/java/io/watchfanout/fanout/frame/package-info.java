/**
 * Watch frames, open to every front end: an {@link io.watchfanout.fanout.frame.Encoding} is
 * registered by the front end that speaks it, with a {@link io.watchfanout.fanout.frame.FrameFormat}
 * that writes its events, initial events, bookmarks and errors, and gets a small id that numbers its
 * memo slots and counters. {@link io.watchfanout.fanout.frame.FrameEncoder} calls the formats and
 * counts every encode; {@link io.watchfanout.fanout.frame.CachedEvent} is an event of the history
 * window with its frames memoized ({@code FrameMemo}), built at most once per encoding and kind and
 * shared by every watcher (docs/ARCHITECTURE.md, invariant 6), and with the
 * {@link io.watchfanout.fanout.frame.ObjectAttributes} that a front end's
 * {@link io.watchfanout.fanout.frame.AttributeExtractor} computed once for its selectors and indexes.
 *
 * <p>The node's own watch protocol ({@code WatchEvent} frames: JSON lines, delimited protobuf,
 * Server-Sent Events) lives here too, as {@link io.watchfanout.fanout.frame.WatchEventEncodings}
 * ({@code ProtoJson} prints proto3 JSON by hand, {@code SseFrames} wraps it as SSE events); the
 * shared parts name no front end's format.
 *
 * <p>The encoder, cached events and their memos are thread-safe ({@code common}'s {@code JsonBuffer}
 * is one encoding call's scratch buffer); a {@code FrameMemo}'s monitor is the innermost lock of the
 * node (docs/ARCHITECTURE.md, "Concurrency model").
 *
 * <p>Imports: {@code io.watchfanout.schema}'s generated messages, {@code io.watchfanout.common} and
 * protobuf only; nothing else of the node, no front end, no Kubernetes codec, no Undertow, no Kafka.
 */
package io.watchfanout.fanout.frame;
