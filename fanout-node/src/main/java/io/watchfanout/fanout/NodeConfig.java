package io.watchfanout.fanout;

import io.watchfanout.common.EtcdSecurity;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.fanout.security.SecurityConfig;
import io.watchfanout.fanout.transport.CorsOrigins;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything a fan-out node is configured with; {@link FanoutNodeMain} fills it from flags
 * and {@code WATCHFANOUT_*} environment variables, as {@link NodeFlags} defines and checks them.
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
 * @param kubePrefix the etcd key prefix of kube-apiserver's objects, served by the Kubernetes API
 *     ({@code --kube-prefix}, default {@code /registry})
 * @param deepReadMaxReaders reads of the events topic for watches older than the window at once,
 *     {@code >= 0}; 0 = none (such watches get 410)
 * @param deepReadMaxBytes bytes of events one such read holds at most, {@code >= 1}
 * @param benchEncodePerWatcher benchmark only ({@code bin/bench memo}): live dispatch encodes a
 *     frame per watcher instead of sharing one per event and encoding; never set in production
 * @param security authentication, authorization and watch limits (README.md, "Security")
 * @param etcdSecurity TLS and user of the node's calls to etcd ({@code --etcd-cacert} ...
 *     {@code --etcd-password-file}); the user only for its own calls, never for forwarded ones;
 *     {@link EtcdSecurity#NONE} for none
 * @param kafkaSettings client settings of every Kafka consumer ({@code --kafka-config});
 *     {@link KafkaClientSettings#NONE} for none
 * @param tls the certificate, key and client CAs of TLS on the HTTP and etcd API ports, or null
 *     for plaintext
 */
public record NodeConfig(
        String kafkaBootstrap,
        String topicPrefix,
        String bindAddress,
        int port,
        String nodeId,
        Duration bookmarkInterval,
        int historyMaxEvents,
        Duration historyMaxAge,
        Duration resourceVersionWait,
        int watcherQueueFrames,
        Duration shutdownDrain,
        Duration stalledCloseAfter,
        Duration writeTimeout,
        Duration tcpKeepaliveIdle,
        Duration tcpKeepaliveInterval,
        int tcpKeepaliveCount,
        Duration maxFeedStaleness,
        int etcdApiPort,
        List<String> etcdEndpoints,
        Duration progressNotifyInterval,
        List<String> corsAllowedOrigins,
        String kubePrefix,
        int deepReadMaxReaders,
        long deepReadMaxBytes,
        boolean benchEncodePerWatcher,
        SecurityConfig security,
        EtcdSecurity etcdSecurity,
        KafkaClientSettings kafkaSettings,
        TlsFiles tls) {
    /**
     * Copies the lists. The ranges in the field descriptions are {@link NodeFlags}' checks, made
     * when the flags are parsed; code that builds a configuration directly (tests) passes values
     * within them.
     */
    public NodeConfig {
        Objects.requireNonNull(kafkaBootstrap, "kafkaBootstrap");
        Objects.requireNonNull(topicPrefix, "topicPrefix");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(kubePrefix, "kubePrefix");
        Objects.requireNonNull(security, "security");
        Objects.requireNonNull(etcdSecurity, "etcdSecurity");
        Objects.requireNonNull(kafkaSettings, "kafkaSettings");
        etcdEndpoints = List.copyOf(etcdEndpoints);
        corsAllowedOrigins = List.copyOf(corsAllowedOrigins);
    }
}
