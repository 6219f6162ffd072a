package io.watchfanout.fanout.etcd;

import java.time.Duration;
import java.util.Objects;

/**
 * What the etcd API front end is configured with, made from the node's flags where the node is
 * assembled ({@code --bind-address}, {@code --etcd-api-port}, {@code --node-id},
 * {@code --progress-notify-interval}, {@code --resource-version-wait}).
 *
 * @param bindAddress the address its port listens on
 * @param port its port, 0 for a free one
 * @param nodeId the node's id, for logs, thread names and headers
 * @param progressNotifyInterval how often a quiet {@code progress_notify} watch gets a progress
 *     notification (etcd's {@code --experimental-watch-progress-notify-interval})
 * @param resourceVersionWait how long a linearizable read waits for the cache to reach etcd's
 *     revision before it is forwarded to etcd
 */
public record EtcdApiSettings(
        String bindAddress, int port, String nodeId, Duration progressNotifyInterval, Duration resourceVersionWait) {
    /** Validates the fields. */
    public EtcdApiSettings {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(progressNotifyInterval, "progressNotifyInterval");
        Objects.requireNonNull(resourceVersionWait, "resourceVersionWait");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " (expected: 0 to 65535)");
        }
    }
}
