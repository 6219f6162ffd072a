package io.watchfanout.fanout;

import io.watchfanout.common.DurationConverter;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything a fan-out node is configured with; {@link FanoutNodeMain} fills it from flags
 * and {@code WATCHFANOUT_*} environment variables.
 *
 * @param kafkaBootstrap Kafka bootstrap servers, {@code host:port[,host:port]}
 * @param topicPrefix the topics are {@code <prefix>.events} and {@code <prefix>.state}
 * @param bindAddress the HTTP listen address
 * @param port the HTTP port, 0 for a free one
 * @param nodeId the id in log lines and Kafka client ids
 * @param bookmarkInterval BOOKMARK period of watch streams, {@code > 0}
 * @param historyMaxEvents events kept in the history window, {@code >= 1}
 * @param historyMaxAge age at which events leave the history window, {@code > 0}
 * @param resourceVersionWait how long a request ahead of the node waits before 504, {@code >= 0}
 * @param watcherQueueFrames frames a live watcher may have waiting before it is parked, {@code >= 1}
 * @param shutdownDrain how long shutdown waits for open streams to take their last frames
 * @param stalledCloseAfter how long an ended stream's client gets to take its last frames before
 *     the connection is closed, {@code > 0}
 * @param benchEncodePerWatcher benchmark only ({@code bin/bench memo}): live dispatch encodes a
 *     frame per watcher instead of sharing one per event and encoding; never set in production
 */
public record NodeConfig(String kafkaBootstrap, String topicPrefix, String bindAddress, int port, String nodeId,
    Duration bookmarkInterval, int historyMaxEvents, Duration historyMaxAge, Duration resourceVersionWait,
    int watcherQueueFrames, Duration shutdownDrain, Duration stalledCloseAfter, boolean benchEncodePerWatcher) {
  /** Validates every field, with messages that name the flag, the value and what was expected. */
  public NodeConfig {
    Objects.requireNonNull(kafkaBootstrap, "kafkaBootstrap");
    Objects.requireNonNull(topicPrefix, "topicPrefix");
    Objects.requireNonNull(nodeId, "nodeId");
    check(!kafkaBootstrap.isBlank(), "--kafka-bootstrap: '' (expected: host:port[,host:port])");
    check(!topicPrefix.isBlank(), "--topic-prefix: '' (expected: a Kafka topic name prefix)");
    check(port >= 0 && port <= 65535, "--port: " + port + " (expected: 0..65535)");
    check(!bookmarkInterval.isZero() && !bookmarkInterval.isNegative(),
        "--bookmark-interval: " + DurationConverter.format(bookmarkInterval) + " (expected: > 0)");
    check(historyMaxEvents >= 1, "--history-max-events: " + historyMaxEvents + " (expected: >= 1)");
    check(historyMaxAge.toMillis() >= 1, "--history-max-age: " + DurationConverter.format(historyMaxAge) + " (expected: >= 1ms)");
    check(!resourceVersionWait.isNegative(), "--resource-version-wait: " + DurationConverter.format(resourceVersionWait) + " (expected: >= 0)");
    check(watcherQueueFrames >= 1, "--watcher-queue-frames: " + watcherQueueFrames + " (expected: >= 1)");
    check(!shutdownDrain.isNegative(), "--shutdown-drain: " + DurationConverter.format(shutdownDrain) + " (expected: >= 0)");
    check(stalledCloseAfter.toMillis() >= 1, "--stalled-close-after: " + DurationConverter.format(stalledCloseAfter) + " (expected: >= 1ms)");
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
