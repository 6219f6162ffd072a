package io.watchfanout.fanout;

import io.watchfanout.fanout.http.CorsOrigins;
import io.watchfanout.fanout.http.TcpKeepalive;
import io.watchfanout.common.DurationConverter;
import java.time.Duration;
import java.util.List;
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
 * @param writeTimeout how long a watch stream with frames waiting may go without its socket
 *     taking a byte, or with bytes in flight that the kernel retries unacknowledged, before its
 *     connection is closed and its watcher removed, {@code >= 1ms}
 * @param tcpKeepaliveIdle time without a packet from a client before the first TCP keepalive
 *     probe, whole seconds in 1..32767
 * @param tcpKeepaliveInterval time between keepalive probes, whole seconds in 1..32767
 * @param tcpKeepaliveCount unanswered keepalive probes before the connection is broken, 1..127
 * @param maxFeedStaleness how old the newest record from the ingester (event, progress or
 *     heartbeat, by its Kafka timestamp) may be before {@code /readyz} fails, {@code >= 0};
 *     0 turns the check off
 * @param etcdApiPort the port of etcd's v3 gRPC API, 0 for a free one, -1 for none
 * @param etcdEndpoints etcd client URLs ({@code http://host:port}) that the etcd API forwards to;
 *     empty for none
 * @param progressNotifyInterval etcd API: quiet time after which a watch with progress_notify
 *     gets an empty response carrying the revision, {@code >= 1ms}
 * @param corsAllowedOrigins origins whose pages may read the HTTP API across origins, or
 *     {@code *}; empty for none ({@link CorsOrigins})
 * @param deepReadMaxReaders reads of the events topic for watches older than the window at once,
 *     {@code >= 0}; 0 = none (such watches get 410)
 * @param deepReadMaxBytes bytes of events one such read holds at most, {@code >= 1}
 * @param benchEncodePerWatcher benchmark only ({@code bin/bench memo}): live dispatch encodes a
 *     frame per watcher instead of sharing one per event and encoding; never set in production
 */
public record NodeConfig(String kafkaBootstrap, String topicPrefix, String bindAddress, int port, String nodeId,
    Duration bookmarkInterval, int historyMaxEvents, Duration historyMaxAge, Duration resourceVersionWait,
    int watcherQueueFrames, Duration shutdownDrain, Duration stalledCloseAfter, Duration writeTimeout,
    Duration tcpKeepaliveIdle, Duration tcpKeepaliveInterval, int tcpKeepaliveCount, Duration maxFeedStaleness,
    int etcdApiPort, List<String> etcdEndpoints, Duration progressNotifyInterval, List<String> corsAllowedOrigins,
    int deepReadMaxReaders, long deepReadMaxBytes,
    boolean benchEncodePerWatcher) {
  /** Validates every field, with messages that name the flag, the value and what was expected. */
  public NodeConfig {
    Objects.requireNonNull(kafkaBootstrap, "kafkaBootstrap");
    Objects.requireNonNull(topicPrefix, "topicPrefix");
    Objects.requireNonNull(nodeId, "nodeId");
    check(!kafkaBootstrap.isBlank(), "--kafka-bootstrap: '' (expected: host:port[,host:port])");
    check(!topicPrefix.isBlank(), "--topic-prefix: '' (expected: a Kafka topic name prefix)");
    check(port >= 0 && port <= 65535, "--port: " + port + " (expected: 0..65535)");
    check(etcdApiPort >= -1 && etcdApiPort <= 65535, "--etcd-api-port: " + etcdApiPort
        + " (expected: 0..65535, or -1 for none)");
    etcdEndpoints = List.copyOf(etcdEndpoints);
    corsAllowedOrigins = List.copyOf(corsAllowedOrigins);
    CorsOrigins.of(corsAllowedOrigins);
    check(progressNotifyInterval.toMillis() >= 1, "--progress-notify-interval: "
        + DurationConverter.format(progressNotifyInterval) + " (expected: >= 1ms)");
    check(!bookmarkInterval.isZero() && !bookmarkInterval.isNegative(),
        "--bookmark-interval: " + DurationConverter.format(bookmarkInterval) + " (expected: > 0)");
    check(deepReadMaxReaders >= 0, "--deep-read-max-readers: " + deepReadMaxReaders + " (expected: >= 0)");
    check(deepReadMaxBytes >= 1, "--deep-read-max-bytes: " + deepReadMaxBytes + " (expected: >= 1)");
    check(historyMaxEvents >= 1, "--history-max-events: " + historyMaxEvents + " (expected: >= 1)");
    check(historyMaxAge.toMillis() >= 1, "--history-max-age: " + DurationConverter.format(historyMaxAge) + " (expected: >= 1ms)");
    check(!resourceVersionWait.isNegative(), "--resource-version-wait: " + DurationConverter.format(resourceVersionWait) + " (expected: >= 0)");
    check(watcherQueueFrames >= 1, "--watcher-queue-frames: " + watcherQueueFrames + " (expected: >= 1)");
    check(!shutdownDrain.isNegative(), "--shutdown-drain: " + DurationConverter.format(shutdownDrain) + " (expected: >= 0)");
    check(!maxFeedStaleness.isNegative(), "--max-feed-staleness: " + DurationConverter.format(maxFeedStaleness)
        + " (expected: >= 0)");
    check(stalledCloseAfter.toMillis() >= 1, "--stalled-close-after: " + DurationConverter.format(stalledCloseAfter) + " (expected: >= 1ms)");
    check(writeTimeout.toMillis() >= 1, "--write-timeout: " + DurationConverter.format(writeTimeout)
        + " (expected: >= 1ms)");
    check(TcpKeepalive.isWholeSeconds(tcpKeepaliveIdle), "--tcp-keepalive-idle: "
        + DurationConverter.format(tcpKeepaliveIdle) + " (expected: whole seconds, 1s..32767s)");
    check(TcpKeepalive.isWholeSeconds(tcpKeepaliveInterval), "--tcp-keepalive-interval: "
        + DurationConverter.format(tcpKeepaliveInterval) + " (expected: whole seconds, 1s..32767s)");
    check(tcpKeepaliveCount >= 1 && tcpKeepaliveCount <= 127, "--tcp-keepalive-count: " + tcpKeepaliveCount
        + " (expected: 1..127)");
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
