package io.watchfanout.fanout.watch;

/**
 * The transport side of a {@link Watcher}: the watcher tells it when frames are waiting, and
 * it pulls them with {@link Watch#poll} when it can write. One write in flight per sink.
 */
public interface WatchSink {
    /**
     * Frames (or the end of the stream) are waiting. Called from any thread, possibly while
     * the sink is already writing; must not block and must not call back into the watcher on
     * the calling thread (schedule the pull on the sink's own thread).
     */
    void wakeUp();
}
