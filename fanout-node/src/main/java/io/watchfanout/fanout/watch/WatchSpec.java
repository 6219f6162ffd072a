package io.watchfanout.fanout.watch;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.schema.v1.Event;
import java.time.Duration;
import java.util.Objects;

/**
 * What a client asked to watch (README.md, "The watch protocol", {@code GET /v1/watch}; and etcd's
 * {@code WatchCreateRequest} on the etcd API).
 *
 * @param range the keys watched
 * @param encoding the frame encoding
 * @param resourceVersion 0 = from the node's current revision; N = every event with revision > N
 * @param allowBookmarks send periodic BOOKMARK frames and one when the stream ends (etcd API:
 *     {@code progress_notify})
 * @param sendInitialEvents first an ADDED frame per key in range, then a BOOKMARK with
 *     {@code initial_events_end}, then the events after it (resourceVersion is then the
 *     oldest revision the initial state may have)
 * @param noPut leave PUT events out (etcd's {@code NOPUT} filter)
 * @param noDelete leave DELETE events out (etcd's {@code NODELETE} filter)
 * @param startBookmark first a BOOKMARK at {@code resourceVersion}, whatever allowBookmarks says:
 *     the revision a {@code sinceTime} resolved to
 * @param progressInterval null for Kubernetes' bookmarks: one every bookmark interval of the node
 *     ({@link CoreSettings#bookmarkInterval}); otherwise etcd's progress notifications: one every
 *     {@code progressInterval}, only to a watch that was sent no event since the last one
 *     ({@code --progress-notify-interval}, {@code >= 1ms})
 */
public record WatchSpec(
        KeyRange range,
        Encoding encoding,
        long resourceVersion,
        boolean allowBookmarks,
        boolean sendInitialEvents,
        boolean noPut,
        boolean noDelete,
        boolean startBookmark,
        Duration progressInterval) {
    /** Validates the fields. */
    public WatchSpec {
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(encoding, "encoding");
        if (resourceVersion < 0) {
            throw new IllegalArgumentException("resourceVersion: " + resourceVersion + " (expected: >= 0)");
        }
    }

    /** A watch with Kubernetes' bookmarks (no progress interval of its own). */
    public WatchSpec(
            KeyRange range,
            Encoding encoding,
            long resourceVersion,
            boolean allowBookmarks,
            boolean sendInitialEvents,
            boolean noPut,
            boolean noDelete,
            boolean startBookmark) {
        this(range, encoding, resourceVersion, allowBookmarks, sendInitialEvents, noPut, noDelete, startBookmark, null);
    }

    /** A watch without a first bookmark. */
    public WatchSpec(
            KeyRange range,
            Encoding encoding,
            long resourceVersion,
            boolean allowBookmarks,
            boolean sendInitialEvents,
            boolean noPut,
            boolean noDelete) {
        this(range, encoding, resourceVersion, allowBookmarks, sendInitialEvents, noPut, noDelete, false);
    }

    /** A watch of every event type (the HTTP API has no filters). */
    public WatchSpec(
            KeyRange range,
            Encoding encoding,
            long resourceVersion,
            boolean allowBookmarks,
            boolean sendInitialEvents) {
        this(range, encoding, resourceVersion, allowBookmarks, sendInitialEvents, false, false);
    }

    /** True when the watch has a filter, so that each event must be looked at. */
    boolean filters() {
        return noPut || noDelete;
    }

    /** True when the filters let {@code event} through. */
    boolean accepts(CachedEvent event) {
        return event.event().getType() == Event.Type.DELETE ? !noDelete : !noPut;
    }
}
