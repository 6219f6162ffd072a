package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.watch.BookmarkFrames;
import io.watchfanout.kube.codec.KubeWatchFrames;
import io.watchfanout.kube.codec.resources.KubeResource;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The BOOKMARK frames of Kubernetes watches: an empty object of the watched kind holding the
 * resourceVersion (and, closing a watch-list's initial events, the
 * {@code k8s.io/initial-events-end} annotation), so they differ by kind and encoding. The newest
 * revision's bookmark of each kind and encoding is memoized and shared by all its watches, so a
 * bookmark round costs one encode per kind, not per watcher.
 *
 * <p>Thread-safe.
 */
final class KubeBookmarks {
    private record Key(String group, String version, String kind, boolean protobuf) {}

    private record Latest(long revision, ByteBuffer frame) {}

    private final Map<Key, Latest> latest = new ConcurrentHashMap<>();

    /**
     * The bookmarks of watches of {@code resource} in {@code format}.
     *
     * @param endsInitialEvents whether the watch's initial events end with the
     *     {@code k8s.io/initial-events-end} bookmark (watch-list, {@code sendInitialEvents=true});
     *     without it they end with nothing, as a watch from resourceVersion "" or "0"
     */
    BookmarkFrames of(KubeResource resource, KubeFormat format, boolean endsInitialEvents) {
        boolean protobuf = format == KubeFormat.PROTOBUF;
        Key key = new Key(resource.group(), resource.version(), resource.kind(), protobuf);
        return (revision, initialEventsEnd) -> {
            if (initialEventsEnd) {
                return endsInitialEvents ? render(resource, protobuf, revision, true) : null;
            }
            Latest l = latest.get(key);
            if (l != null && l.revision() == revision) {
                return l.frame();
            }
            ByteBuffer frame = render(resource, protobuf, revision, false);
            if (l == null || l.revision() < revision) {
                latest.put(key, new Latest(revision, frame));
            }
            return frame;
        };
    }

    private static ByteBuffer render(KubeResource resource, boolean protobuf, long revision, boolean end) {
        return KubeEncodings.wrap(
                protobuf
                        ? KubeWatchFrames.protobufBookmark(resource, revision, end)
                        : KubeWatchFrames.jsonBookmark(resource, revision, end));
    }
}
