package io.watchfanout.fanout;

import io.watchfanout.common.EtcdSecurity;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.fanout.security.SecurityConfig;
import io.watchfanout.fanout.transport.CorsOrigins;
import io.watchfanout.fanout.transport.TcpKeepalive;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything a fan-out node is configured with, one settings record per part of the node;
 * {@link FanoutNodeMain} fills it from flags and {@code WATCHFANOUT_*} environment variables, as
 * {@link NodeFlags} defines and checks them. The ranges in the field descriptions are those
 * checks, made once when the flags are parsed; code that builds a configuration directly passes
 * values within them. Knobs of benchmarks are not here ({@link BenchSettings}).
 *
 * @param nodeId the id in log lines and Kafka client ids ({@code --node-id})
 * @param core the watch cache, its history window and its watchers
 * @param feed the Kafka feed the cache is rebuilt from and tails, and reads of older history
 * @param http the HTTP port and its {@code /v1} API
 * @param etcd the node's own calls to etcd
 * @param etcdApi etcd's v3 gRPC API
 * @param kube the Kubernetes API
 * @param security authentication, authorization, watch limits and TLS
 */
public record NodeConfig(
        String nodeId, Core core, Feed feed, Http http, Etcd etcd, EtcdApi etcdApi, Kube kube, Security security) {
    /** Checks that no part is null. */
    public NodeConfig {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(core, "core");
        Objects.requireNonNull(feed, "feed");
        Objects.requireNonNull(http, "http");
        Objects.requireNonNull(etcd, "etcd");
        Objects.requireNonNull(etcdApi, "etcdApi");
        Objects.requireNonNull(kube, "kube");
        Objects.requireNonNull(security, "security");
    }

    /**
     * The watch cache and core.
     *
     * @param historyMaxEvents events kept in the history window, {@code >= 1}
     * @param historyMaxAge age at which events leave the history window, {@code >= 1ms}
     * @param watcherQueueFrames frames a live watcher may have waiting before it is parked, {@code >= 1}
     * @param bookmarkInterval BOOKMARK period of watch streams, {@code > 0}
     * @param resourceVersionWait how long a request ahead of the node waits for the revision before
     *     504 (every front end), {@code >= 0}
     * @param shutdownDrain how long shutdown waits for open streams to take their last frames, {@code >= 0}
     */
    public record Core(
            int historyMaxEvents,
            Duration historyMaxAge,
            int watcherQueueFrames,
            Duration bookmarkInterval,
            Duration resourceVersionWait,
            Duration shutdownDrain) {
        /** Checks that no field is null. */
        public Core {
            Objects.requireNonNull(historyMaxAge, "historyMaxAge");
            Objects.requireNonNull(bookmarkInterval, "bookmarkInterval");
            Objects.requireNonNull(resourceVersionWait, "resourceVersionWait");
            Objects.requireNonNull(shutdownDrain, "shutdownDrain");
        }
    }

    /**
     * The Kafka feed.
     *
     * @param kafkaBootstrap Kafka bootstrap servers, {@code host:port[,host:port]}
     * @param topicPrefix the topics are {@code <prefix>.events} and {@code <prefix>.state}
     * @param kafkaSettings client settings of every Kafka client ({@code --kafka-config});
     *     {@link KafkaClientSettings#NONE} for none
     * @param maxFeedStaleness how old the newest record from the ingester (event, progress or
     *     heartbeat, by its Kafka timestamp) may be before {@code /readyz} fails, {@code >= 0};
     *     0 turns the check off
     * @param deepReadMaxReaders reads of the events topic for watches older than the window at
     *     once, {@code >= 0}; 0 = none (such watches get 410)
     * @param deepReadMaxBytes bytes of events one such read holds at most, {@code >= 1}
     */
    public record Feed(
            String kafkaBootstrap,
            String topicPrefix,
            KafkaClientSettings kafkaSettings,
            Duration maxFeedStaleness,
            int deepReadMaxReaders,
            long deepReadMaxBytes) {
        /** Checks that no field is null. */
        public Feed {
            Objects.requireNonNull(kafkaBootstrap, "kafkaBootstrap");
            Objects.requireNonNull(topicPrefix, "topicPrefix");
            Objects.requireNonNull(kafkaSettings, "kafkaSettings");
            Objects.requireNonNull(maxFeedStaleness, "maxFeedStaleness");
        }
    }

    /**
     * The HTTP port: the {@code /v1} API, the Kubernetes API, etcd's JSON gateway and the
     * operations endpoints.
     *
     * @param bindAddress the listen address of the HTTP port, and of the etcd API's
     * @param port the HTTP port, 0 for a free one
     * @param stalledCloseAfter how long an ended stream's client gets to take its last frames before
     *     the connection is closed, {@code > 0}
     * @param writeTimeout how long a watch stream with frames waiting may go without its socket
     *     taking a byte, or with bytes in flight that the kernel retries unacknowledged, before its
     *     connection is closed and its watcher removed, {@code >= 1ms}
     * @param tcpKeepalive keepalive timings of accepted connections
     * @param corsAllowedOrigins origins whose pages may read the HTTP API across origins, or
     *     {@code *}; empty for none ({@link CorsOrigins})
     */
    public record Http(
            String bindAddress,
            int port,
            Duration stalledCloseAfter,
            Duration writeTimeout,
            TcpKeepalive tcpKeepalive,
            List<String> corsAllowedOrigins) {
        /** Copies the list. */
        public Http {
            Objects.requireNonNull(bindAddress, "bindAddress");
            Objects.requireNonNull(stalledCloseAfter, "stalledCloseAfter");
            Objects.requireNonNull(writeTimeout, "writeTimeout");
            Objects.requireNonNull(tcpKeepalive, "tcpKeepalive");
            corsAllowedOrigins = List.copyOf(corsAllowedOrigins);
        }
    }

    /**
     * The node's etcd: consistent reads, {@code --authz=etcd}, {@code --etcd-user-auth} and the
     * etcd API's forwarded calls go there.
     *
     * @param endpoints etcd client URLs ({@code http://host:port}); empty for none
     * @param security TLS and user of the node's calls to etcd ({@code --etcd-cacert} ...
     *     {@code --etcd-password-file}); the user only for its own calls, never for forwarded ones;
     *     {@link EtcdSecurity#NONE} for none
     */
    public record Etcd(List<String> endpoints, EtcdSecurity security) {
        /** Copies the list. */
        public Etcd {
            endpoints = List.copyOf(endpoints);
            Objects.requireNonNull(security, "security");
        }
    }

    /**
     * etcd's v3 gRPC API.
     *
     * @param port its port, 0 for a free one, -1 for none
     * @param progressNotifyInterval quiet time after which a watch with progress_notify gets an
     *     empty response carrying the revision, {@code >= 1ms}
     */
    public record EtcdApi(int port, Duration progressNotifyInterval) {
        /** Checks that no field is null. */
        public EtcdApi {
            Objects.requireNonNull(progressNotifyInterval, "progressNotifyInterval");
        }
    }

    /**
     * The Kubernetes API.
     *
     * @param prefix the etcd key prefix of kube-apiserver's objects ({@code --kube-prefix},
     *     default {@code /registry})
     */
    public record Kube(String prefix) {
        /** Checks that the prefix is given. */
        public Kube {
            Objects.requireNonNull(prefix, "prefix");
        }
    }

    /**
     * Who may do what, and TLS.
     *
     * @param access authentication, authorization and watch limits (README.md, "Security")
     * @param tls the certificate, key and client CAs of TLS on the HTTP and etcd API ports, or
     *     null for plaintext
     */
    public record Security(SecurityConfig access, TlsFiles tls) {
        /** Checks that the access settings are given. */
        public Security {
            Objects.requireNonNull(access, "access");
        }
    }
}
