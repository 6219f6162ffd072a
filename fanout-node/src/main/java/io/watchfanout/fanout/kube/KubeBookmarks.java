package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.watch.BookmarkFrames;
import io.watchfanout.kube.codec.KubeWatchFrames;
import io.watchfanout.kube.codec.PartialObjectMetadata;
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
    private record Key(String group, String version, String kind, boolean protobuf, boolean metadata) {}

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
        boolean protobuf = format.protobuf();
        // A metadata-only watch's bookmark is a PartialObjectMetadata, whatever the watched kind.
        String apiVersion = format.metadata() ? PartialObjectMetadata.API_VERSION : resource.apiVersion();
        String kind = format.metadata() ? PartialObjectMetadata.KIND : resource.kind();
        Key key = format.metadata()
                ? new Key("meta.k8s.io", "v1", kind, protobuf, true)
                : new Key(resource.group(), resource.version(), kind, protobuf, false);
        return (revision, initialEventsEnd) -> {
            if (initialEventsEnd) {
                return endsInitialEvents ? render(apiVersion, kind, protobuf, revision, true) : null;
            }
            Latest l = latest.get(key);
            if (l != null && l.revision() == revision) {
                return l.frame();
            }
            ByteBuffer frame = render(apiVersion, kind, protobuf, revision, false);
            if (l == null || l.revision() < revision) {
                latest.put(key, new Latest(revision, frame));
            }
            return frame;
        };
    }

    private static ByteBuffer render(String apiVersion, String kind, boolean protobuf, long revision, boolean end) {
        return KubeEncodings.wrap(
                protobuf
                        ? KubeWatchFrames.protobufBookmark(apiVersion, kind, revision, end)
                        : KubeWatchFrames.jsonBookmark(apiVersion, kind, revision, end));
    }
}
