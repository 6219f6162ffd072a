package io.watchfanout.fanout.watch;

import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A front end's handle on one open watch (what {@link WatchCore#watch} returns): the transport
 * pulls frames with {@link #poll} whenever its {@link WatchSink} is woken and it can write, and
 * ends or forgets the watch. Everything else (live dispatch, parking, catch-up, bookmarks, 410)
 * is the core's. Kubernetes' {@code watch.Interface} over a {@code cacheWatcher}.
 *
 * <p>Thread-safety: {@link #poll} from the transport's thread, never concurrently with itself;
 * the rest from any thread.
 */
public final class Watch {
    /** What {@link #poll} found. */
    public enum PollResult {
        /** Frames were added to the output list. */
        FRAMES,
        /** Nothing to send now; the sink is woken when there is. */
        IDLE,
        /** Catch-up made progress without frames; poll again soon (after other work). */
        YIELD,
        /** The stream is over: end it (then {@link #close}). */
        END
    }

    private final Watcher watcher;
    private final Dispatcher dispatcher;
    private final CatchUp catchUp;
    private final BookmarkTimer timer;

    Watch(Watcher watcher, Dispatcher dispatcher, CatchUp catchUp, BookmarkTimer timer) {
        this.watcher = watcher;
        this.dispatcher = dispatcher;
        this.catchUp = catchUp;
        this.timer = timer;
    }

    /**
     * Hands the transport up to {@code maxFrames} waiting frames, producing them first from the
     * initial state or from history when the watch is not live. Transport thread only.
     *
     * @param out receives shared read-only frames ({@code duplicate()} them to write)
     */
    public PollResult poll(List<ByteBuffer> out, int maxFrames) {
        return catchUp.poll(watcher, out, maxFrames);
    }

    /**
     * Ends the stream normally (timeoutSeconds, node shutdown): it leaves dispatch, gets a final
     * BOOKMARK when bookmarks are allowed, and {@link #poll} then returns its last frames and END.
     */
    public void finish() {
        dispatcher.finish(watcher);
    }

    /**
     * Ends the stream with an ERROR frame carrying {@code status}; queued frames are dropped.
     *
     * @return false if the stream was already ending or over (nothing changed)
     */
    public boolean endWithError(Status status) {
        return dispatcher.endWithError(watcher, status);
    }

    /** The transport is gone (client disconnected or stream ended): forget the watch. Idempotent. */
    public void close() {
        timer.unregister(watcher);
        dispatcher.close(watcher);
    }

    /** A process-unique id, for logs. */
    public long id() {
        return watcher.id;
    }

    /** What is watched. */
    public WatchSpec spec() {
        return watcher.spec;
    }

    /** The revision the watch has been handed every matching event up to. */
    public long cursor() {
        return watcher.cursor();
    }

    /** True while in live dispatch. */
    public boolean isLive() {
        return watcher.isLive();
    }

    /** True while catching up from history (new, or parked after an overflow). */
    public boolean isCatchingUp() {
        return watcher.isCatchingUp();
    }

    /** True once the stream is ending (its last frames are queued) or over. */
    public boolean isEnding() {
        return watcher.isEnding();
    }

    /** Frames waiting for the transport. */
    public int queued() {
        return watcher.queued();
    }

    @Override
    public String toString() {
        return watcher.toString();
    }
}
