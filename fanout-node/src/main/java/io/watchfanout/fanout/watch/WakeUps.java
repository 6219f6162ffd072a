package io.watchfanout.fanout.watch;

import java.util.ArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Coalesces the wake-ups of the watch streams that one thread serves into one task on that
 * thread: when an event matches 1,000 watchers, the feed thread hands each serving thread one
 * task that pumps all of its woken streams, instead of 1,000 {@code execute} calls, each a queue
 * node, a lock and possibly a thread or selector to wake. Both transports use it: HTTP per IO
 * thread, the etcd API per lane.
 *
 * <p>The woken streams go into a list that the serving thread swaps out once per run, so the two
 * threads meet on one short monitor per batch rather than on a shared queue's nodes per stream.
 * The monitor is a leaf: nothing else is locked while it is held. A stream whose pump throws is
 * logged and the others of the batch are still pumped.
 *
 * <p>Thread-safety: {@link #wake} from any thread; the streams are pumped on the executor's
 * thread, which must run one task at a time (an IO thread, a single-thread lane).
 *
 * @param <S> the transport's stream
 */
public final class WakeUps<S> implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(WakeUps.class);

    private final Executor thread;
    private final Consumer<S> pump;
    /** Guarded by this. */
    private ArrayList<S> woken = new ArrayList<>();
    /** Guarded by this: a run is queued and has not swapped the list yet. */
    private boolean scheduled;
    /** Serving thread only: the list being pumped, reused. */
    private ArrayList<S> pumping = new ArrayList<>();

    /**
     * @param thread the serving thread's executor, one task at a time
     * @param pump what a wake-up does to a stream, on that thread
     */
    public WakeUps(Executor thread, Consumer<S> pump) {
        this.thread = thread;
        this.pump = pump;
    }

    /**
     * Queues {@code stream}'s pump on the serving thread; at most one task is pending. A stream
     * woken twice before the run is pumped twice: callers keep their own pending flag. Once the
     * executor refuses tasks (the transport is stopping) nothing is pumped any more.
     */
    public void wake(S stream) {
        boolean schedule;
        synchronized (this) {
            woken.add(stream);
            schedule = !scheduled;
            scheduled = true;
        }
        if (schedule) {
            try {
                thread.execute(this);
            } catch (RejectedExecutionException e) {
                // Stopping: the streams end with their transport.
            }
        }
    }

    /** Pumps every stream woken since the last run; on the serving thread only. */
    @Override
    public void run() {
        ArrayList<S> batch;
        synchronized (this) {
            batch = woken;
            woken = pumping;
            scheduled = false;
        }
        pumping = batch;
        try {
            for (int i = 0; i < batch.size(); i++) {
                try {
                    pump.accept(batch.get(i));
                } catch (RuntimeException e) {
                    log.error("a watch stream's pump failed", e);
                }
            }
        } finally {
            batch.clear();
        }
    }
}
