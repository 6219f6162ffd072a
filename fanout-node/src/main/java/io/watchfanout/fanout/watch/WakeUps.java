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
 * <p>A transport may pump a batch in slices: a run that stops short of the batch's end queues
 * itself again, behind whatever the slice queued on the thread meanwhile. On a Netty event loop
 * that is the transport's flush of what the slice wrote, so that the buffers of one slice are
 * written and back in the thread's cache before the next slice takes its own.
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
    /** Guarded by this: a run is queued or a batch is being pumped. */
    private boolean scheduled;
    /** Serving thread only: the list being pumped, reused. */
    private ArrayList<S> pumping = new ArrayList<>();
    /** Serving thread only: the next stream of {@link #pumping} to pump. */
    private int next;

    private final int slice;

    /**
     * A batch pumped whole in one run.
     *
     * @param thread the serving thread's executor, one task at a time
     * @param pump what a wake-up does to a stream, on that thread
     */
    public WakeUps(Executor thread, Consumer<S> pump) {
        this(thread, pump, Integer.MAX_VALUE);
    }

    /**
     * @param thread the serving thread's executor, one task at a time
     * @param pump what a wake-up does to a stream, on that thread
     * @param slice the streams pumped per run, {@code >= 1}; the rest of the batch in later runs
     * @throws IllegalArgumentException if {@code slice < 1}
     */
    public WakeUps(Executor thread, Consumer<S> pump, int slice) {
        if (slice < 1) {
            throw new IllegalArgumentException("slice: " + slice + " (expected: >= 1)");
        }
        this.thread = thread;
        this.pump = pump;
        this.slice = slice;
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
            runLater();
        }
    }

    private void runLater() {
        try {
            thread.execute(this);
        } catch (RejectedExecutionException e) {
            // Stopping: the streams end with their transport.
        }
    }

    /**
     * Pumps the streams woken since the last batch began, a slice of them per run; on the serving
     * thread only.
     */
    @Override
    public void run() {
        ArrayList<S> batch = pumping;
        if (next == batch.size()) {
            batch.clear();
            next = 0;
            synchronized (this) {
                batch = woken;
                woken = pumping;
            }
            pumping = batch;
        }
        int end = (int) Math.min(batch.size(), (long) next + slice);
        try {
            while (next < end) {
                S stream = batch.get(next++);
                try {
                    pump.accept(stream);
                } catch (RuntimeException e) {
                    log.error("a watch stream's pump failed", e);
                }
            }
        } finally {
            // After an Error too: the thread's streams must not be left without a run.
            goOn();
        }
    }

    private void goOn() {
        if (next < pumping.size()) {
            // Still scheduled: wake-ups meanwhile join the next batch and queue no run of their own.
            runLater();
            return;
        }
        boolean more;
        synchronized (this) {
            more = !woken.isEmpty();
            scheduled = more;
        }
        if (more) {
            runLater();
        }
    }
}
