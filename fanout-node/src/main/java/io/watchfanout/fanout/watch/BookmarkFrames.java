package io.watchfanout.fanout.watch;

import java.nio.ByteBuffer;

/**
 * A watch's own BOOKMARK frames, for a front end whose bookmarks depend on what is watched (a
 * Kubernetes bookmark is an empty object of the watched kind): set with
 * {@link WatchSpec.Builder#bookmarkFrames}. Without it, bookmarks are the encoding's, memoized by
 * the core per revision. An implementation shares its frames between the watches of one kind
 * (memoize per revision), so that a bookmark round costs one encode per kind, not per watcher.
 *
 * <p>Called from the bookmark timer's thread and transport threads: thread-safe, non-blocking.
 */
@FunctionalInterface
public interface BookmarkFrames {
    /**
     * A read-only BOOKMARK frame at {@code revision}.
     *
     * @param initialEventsEnd true for the bookmark that closes a watch's initial events
     * @return the frame; null only for {@code initialEventsEnd} when the watch's initial events
     *     end without one (a Kubernetes watch from resourceVersion "" or "0" without
     *     {@code sendInitialEvents})
     */
    ByteBuffer bookmark(long revision, boolean initialEventsEnd);
}
