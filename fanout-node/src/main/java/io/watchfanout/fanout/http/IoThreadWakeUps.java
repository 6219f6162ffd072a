package io.watchfanout.fanout.http;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.xnio.XnioIoThread;

/**
 * Coalesces the wake-ups of the watch streams of one IO thread into one task: when an event
 * matches 1,000 watchers, the feed thread hands each IO thread one task that pumps all of its
 * woken streams, instead of 1,000 {@code execute} calls, each taking the thread's work-queue
 * lock and possibly waking its selector.
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
  private final ConcurrentLinkedQueue<WatchStream> woken = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();

  private IoThreadWakeUps(XnioIoThread io) {
    this.io = io;
  }

  /** Queues {@code stream} to be pumped on the IO thread; at most one task is pending. */
  void wake(WatchStream stream) {
    woken.offer(stream);
    if (scheduled.compareAndSet(false, true)) {
      io.execute(this);
    }
  }

  @Override
  public void run() {
    // Cleared before draining: a stream queued after this point schedules a new run.
    scheduled.set(false);
    WatchStream s;
    while ((s = woken.poll()) != null) {
      s.pumpWoken();
    }
  }
}
