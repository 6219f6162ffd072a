package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.Encoding;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the dispatch and of the watchers, read by the metrics endpoint and by tests.
 * Thread-safe (LongAdders).
 */
public final class WatchStats {
  final LongAdder eventsDispatched = new LongAdder();
  final LongAdder[] framesDelivered = adders(Encoding.values().length);
  final LongAdder bookmarksSent = new LongAdder();
  final LongAdder parked = new LongAdder();
  final LongAdder unparked = new LongAdder();
  final LongAdder endedExpired = new LongAdder();
  final LongAdder[] bytesSent = adders(Encoding.values().length);

  private static LongAdder[] adders(int n) {
    LongAdder[] a = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  /** Events applied by the feed and offered to their matching watchers. */
  public long eventsDispatched() {
    return eventsDispatched.sum();
  }

  /** Frames of this encoding handed to watchers' transports (events, bookmarks, errors). */
  public long framesDelivered(Encoding encoding) {
    return framesDelivered[encoding.ordinal()].sum();
  }

  /** BOOKMARK frames queued to watchers. */
  public long bookmarksSent() {
    return bookmarksSent.sum();
  }

  /** Times a live watcher overflowed its queue and was parked. */
  public long parked() {
    return parked.sum();
  }

  /** Times a parked watcher caught up and rejoined live dispatch. */
  public long unparked() {
    return unparked.sum();
  }

  /** Watchers ended with 410 Expired because they fell behind the history window. */
  public long endedExpired() {
    return endedExpired.sum();
  }

  /** Bytes written to watch streams of this encoding (counted by the transport). */
  public long bytesSent(Encoding encoding) {
    return bytesSent[encoding.ordinal()].sum();
  }

  /** Adds bytes written to a watch stream of {@code encoding}. */
  public void addBytesSent(Encoding encoding, long bytes) {
    bytesSent[encoding.ordinal()].add(bytes);
  }
}
