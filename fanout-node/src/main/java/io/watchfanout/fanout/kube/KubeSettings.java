package io.watchfanout.fanout.kube;

import java.time.Duration;
import java.util.Objects;

/**
 * How a node serves the Kubernetes API.
 *
 * @param prefix the etcd key prefix of kube-apiserver's objects ({@code --kube-prefix}, as
 *     kube-apiserver's {@code --etcd-prefix}; {@code /registry} by default)
 * @param resourceVersionWait how long a read of a resourceVersion ahead of the node waits for it
 *     before 504, {@code >= 0} ({@code --resource-version-wait})
 * @param retryAfterSeconds the {@code Retry-After} of 503 and 504 answers, {@code >= 1}
 * @param nodeId the node's id in log lines
 */
public record KubeSettings(String prefix, Duration resourceVersionWait, int retryAfterSeconds, String nodeId) {
    /** Checks the values. */
    public KubeSettings {
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(resourceVersionWait, "resourceVersionWait");
        Objects.requireNonNull(nodeId, "nodeId");
        if (!prefix.startsWith("/")) {
            throw new IllegalArgumentException("prefix " + prefix + " (expected: an etcd key prefix starting with /)");
        }
        if (retryAfterSeconds < 1) {
            throw new IllegalArgumentException("retryAfterSeconds " + retryAfterSeconds + " (expected: >= 1)");
        }
    }
}
