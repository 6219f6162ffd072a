package io.watchfanout.fanout.transport;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the HTTP API.
 *
 * @param resourceVersionWait how long a request for a revision ahead of the node waits
 *     before 504 Timeout, {@code >= 0}
 * @param retryAfterSeconds the {@code Retry-After} of 503 and 504 answers, {@code >= 1}
 * @param nodeId the node's id, for log lines
 * @param stalledCloseAfter once a stream has ended (ERROR frame, timeoutSeconds, shutdown), how
 *     long its client gets to take the last frames before the connection is closed, {@code > 0}
 * @param writeTimeout how long a watch stream with frames waiting may go without its socket
 *     taking a byte, or with bytes in flight that the kernel retries unacknowledged
 *     ({@link UnacknowledgedSweeper}), before the connection is closed and its watcher removed,
 *     {@code >= 1ms}
 * @param tcpKeepalive keepalive timings of accepted connections
 */
public record HttpSettings(
        Duration resourceVersionWait,
        int retryAfterSeconds,
        String nodeId,
        Duration stalledCloseAfter,
        Duration writeTimeout,
        TcpKeepalive tcpKeepalive) {
    /**
     * Checks what no flag checks; the flag-backed durations are checked where they are parsed
     * (the fan-out node's flag table, io.watchfanout.fanout.NodeFlags).
     *
     * @throws IllegalArgumentException naming the field, its value and what was expected
     */
    public HttpSettings {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(tcpKeepalive, "tcpKeepalive");
        if (retryAfterSeconds < 1) {
            throw new IllegalArgumentException("retryAfterSeconds: " + retryAfterSeconds + " (expected: >= 1)");
        }
    }
}
