package io.watchfanout.fanout.http;

import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.xnio.XnioIoThread;

/**
 * Coalesces the wake-ups of the watch streams of one IO thread into one task: when an event
 * matches 1,000 watchers, the feed thread hands each IO thread one task that pumps all of its
 * woken streams, instead of 1,000 {@code execute} calls, each taking the thread's work-queue
 * lock and possibly waking its selector.
 *
 * <p>The woken streams go into a list that the IO thread swaps out once per run, so the two
 * threads meet on one short monitor per batch rather than on a shared queue's nodes per stream.
 *
 * <p>Thread-safety: {@link #wake} from any thread; the streams are pumped on the IO thread.
 */
final class IoThreadWakeUps implements Runnable {
    /** One per IO thread of a node; {@link #forThread} creates them on first use. */
    static final class Registry {
        private final Map<XnioIoThread, IoThreadWakeUps> byThread = new ConcurrentHashMap<>();

        IoThreadWakeUps forThread(XnioIoThread io) {
            return byThread.computeIfAbsent(io, IoThreadWakeUps::new);
        }
    }

    private final XnioIoThread io;
    /** Guarded by this. */
    private ArrayList<WatchStream> woken = new ArrayList<>();
    /** Guarded by this: a run is queued on the IO thread and has not swapped the list yet. */
    private boolean scheduled;
    /** IO thread only: the list being pumped, reused. */
    private ArrayList<WatchStream> pumping = new ArrayList<>();

    private IoThreadWakeUps(XnioIoThread io) {
        this.io = io;
    }

    /** Queues {@code stream} to be pumped on the IO thread; at most one task is pending. */
    void wake(WatchStream stream) {
        boolean schedule;
        synchronized (this) {
            woken.add(stream);
            schedule = !scheduled;
            scheduled = true;
        }
        if (schedule) {
            io.execute(this);
        }
    }

    @Override
    public void run() {
        ArrayList<WatchStream> batch;
        synchronized (this) {
            batch = woken;
            woken = pumping;
            scheduled = false;
        }
        pumping = batch;
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).pumpWoken();
        }
        batch.clear();
    }
}
