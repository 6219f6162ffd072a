package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.cache.KeyRange;
import io.watchfanout.fanout.frame.Encoding;
import java.util.Objects;

/**
 * What a client asked to watch (README.md, "The watch protocol", {@code GET /v1/watch}).
 *
 * @param range the keys watched
 * @param encoding the frame encoding
 * @param resourceVersion 0 = from the node's current revision; N = every event with revision > N
 * @param allowBookmarks send periodic BOOKMARK frames and one when the stream ends
 * @param sendInitialEvents first an ADDED frame per key in range, then a BOOKMARK with
 *     {@code initial_events_end}, then the events after it (resourceVersion is then the
 *     oldest revision the initial state may have)
 */
public record WatchSpec(KeyRange range, Encoding encoding, long resourceVersion,
    boolean allowBookmarks, boolean sendInitialEvents) {
  /** Validates the fields. */
  public WatchSpec {
    Objects.requireNonNull(range, "range");
    Objects.requireNonNull(encoding, "encoding");
    if (resourceVersion < 0) {
      throw new IllegalArgumentException("resourceVersion: " + resourceVersion + " (expected: >= 0)");
    }
  }
}
