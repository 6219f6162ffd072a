package io.watchfanout.fanout.etcd;

import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchSink;
import io.watchfanout.fanout.watch.WatchSpec;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One watch of an etcd API Watch stream: its id, its request's options, and the core's
 * {@link Watch} once the cache has reached its start revision. Its wake-ups go to its stream.
 *
 * <p>Thread-safety: the fields belong to the stream's serial executor; {@link #wakeUp()} is
 * called from any thread.
 */
final class EtcdWatch implements WatchSink {
    final long id;
    final WatchSpec spec;
    final boolean fragment;
    /** The encoded {@code watch_id} field of its responses (empty for id 0, as protobuf omits a default). */
    final byte[] idField;

    private final EtcdWatchStream stream;
    /** The core's watcher; null while waiting for a future start revision, and once released. */
    Watch watcher;
    /** Cancels the wait for the cache to reach the start revision while it lasts, else null. */
    Runnable cancelOpen;
    /** The watch's admission, ended with the watch; null once released. */
    io.watchfanout.fanout.security.WatchGrant grant;
    /** Frames the stream has taken from the watcher, for the grant's end. */
    long frames;
    /** Frames of a revision polled past a response's bound, for its next response; null when none. */
    List<ByteBuffer> carry;
    /** Canceled by the node (an error frame); the stream drops it after its pump. */
    boolean canceled;

    /**
     * The stream's first watch: its wake-ups only set {@link #queued}, and the pump looks at it before
     * the queue of the others (most streams carry one watch: jetcd opens one stream per watch). A
     * final field rather than a comparison with the stream's {@code first}: wake-ups come from any
     * thread, and that field belongs to the stream's lane.
     */
    final boolean first;

    EtcdWatch(long id, WatchSpec spec, boolean fragment, boolean first, EtcdWatchStream stream) {
        this.id = id;
        this.spec = spec;
        this.fragment = fragment;
        this.first = first;
        this.idField = io.etcd.jetcd.api.WatchResponse.newBuilder()
                .setWatchId(id)
                .build()
                .toByteArray();
        this.stream = stream;
    }

    /** In the stream's queue of woken watches (set by whoever queues it, cleared by the pump). */
    final AtomicBoolean queued = new AtomicBoolean();

    @Override
    public void wakeUp() {
        if (queued.compareAndSet(false, true)) {
            stream.woken(this);
        }
    }
}
