package io.watchfanout.fanout.http;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the HTTP API.
 *
 * @param bookmarkInterval how often a watch stream gets a BOOKMARK (and a parked watcher's
 *     expiry is checked), {@code > 0}
 * @param resourceVersionWait how long a request for a revision ahead of the node waits
 *     before 504 Timeout, {@code >= 0}
 * @param retryAfterSeconds the {@code Retry-After} of 503 and 504 answers, {@code >= 1}
 * @param nodeId the node's id, for log lines
 * @param stalledCloseAfter once a stream has ended (ERROR frame, timeoutSeconds, shutdown), how
 *     long its client gets to take the last frames before the connection is closed, {@code > 0}
 */
public record HttpSettings(Duration bookmarkInterval, Duration resourceVersionWait,
    int retryAfterSeconds, String nodeId, Duration stalledCloseAfter) {
  /** Validates the fields. */
  public HttpSettings {
    Objects.requireNonNull(nodeId, "nodeId");
    if (bookmarkInterval.isNegative() || bookmarkInterval.isZero()) {
      throw new IllegalArgumentException("bookmarkInterval: " + bookmarkInterval + " (expected: > 0)");
    }
    if (resourceVersionWait.isNegative()) {
      throw new IllegalArgumentException("resourceVersionWait: " + resourceVersionWait + " (expected: >= 0)");
    }
    if (stalledCloseAfter.toMillis() < 1) {
      throw new IllegalArgumentException("stalledCloseAfter: " + stalledCloseAfter + " (expected: >= 1ms)");
    }
    if (retryAfterSeconds < 1) {
      throw new IllegalArgumentException("retryAfterSeconds: " + retryAfterSeconds + " (expected: >= 1)");
    }
  }
}
