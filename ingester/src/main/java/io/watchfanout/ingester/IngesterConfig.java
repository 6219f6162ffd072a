package io.watchfanout.ingester;

import com.google.protobuf.ByteString;
import io.watchfanout.common.EtcdSecurity;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.ingester.publish.DigestSchedule;
import io.watchfanout.ingester.topics.TopicSettings;
import io.watchfanout.schema.WatchFanoutSerdes;
import java.time.Duration;
import java.util.List;

/**
 * Settings of one ingester, as parsed from the command line by {@link IngesterMain}.
 *
 * @param etcdEndpoints etcd client URLs; empty for a process that only materializes
 * @param kafkaBootstrap Kafka bootstrap servers
 * @param topicPrefix prefix of the topics {@code <prefix>.events} and {@code <prefix>.state}
 * @param keyPrefix the etcd key prefix to publish; empty for every key
 * @param httpHost address of the operations endpoints
 * @param httpPort port of the operations endpoints; 0 for any free port, -1 for none
 * @param transactionalId the ingester's identity: ingesters with the same id fence each other
 * @param eventsRetention retention of the events topic when this ingester creates it
 * @param maxRecordBytes largest events or state record ({@code max.message.bytes})
 * @param statePartitions partitions of the state topic when this ingester creates it
 * @param replicationFactor replication factor of created topics, and the least existing ones
 *     must have; -1 for the broker default
 * @param minInsyncReplicas {@code min.insync.replicas} of created topics, and the least existing
 *     ones must have; -1 for the broker default
 * @param transactionTimeout bound of one open Kafka transaction
 * @param watchQueueBytes bound of the keys and values waiting between etcd and Kafka
 * @param maxBatchRecords records per Kafka transaction before it is cut (between revisions)
 * @param etcdMaxInboundBytes largest gRPC message accepted from etcd
 * @param snapshotPageSize keys per range request of an initial load or resync
 * @param initialHistoryRevisions on an empty events topic, how many revisions before etcd's
 *     current one the history may start at most (it starts at etcd's oldest revision within
 *     them); 0 for the current state only
 * @param runPublisher whether this process watches etcd and publishes to the events topic; a
 *     process without it runs only the state materializer
 * @param runMaterializer whether this process also runs the state materializer
 * @param retryBackoffMax longest wait between retries of etcd or Kafka
 * @param leaderElection whether replicas elect one publisher through etcd's election API
 * @param electionName the election's name (an etcd key prefix)
 * @param electionLeaseTtl the election lease's time-to-live
 * @param heartbeatInterval how long the publisher may publish nothing before it publishes a
 *     heartbeat (a progress record that repeats the last revision)
 * @param dependencyTimeout how long a probe of etcd or Kafka may take before the ingester
 *     reports that dependency lost (not ready); probes run every second
 * @param etcdSecurity TLS and user of every etcd call; {@link EtcdSecurity#NONE} for none
 * @param kafkaSettings client settings of every Kafka client ({@code --kafka-config}); {@link
 *     KafkaClientSettings#NONE} for none
 * @param tls the certificate, key and client CAs of TLS on the operations port, or null for
 *     plaintext
 * @param compression Kafka's {@code compression.type} of the events the publisher and the state
 *     materializer write: none, gzip, snappy, lz4 or zstd
 * @param digests how digests of the watched range are read and published
 */
public record IngesterConfig(
        List<String> etcdEndpoints,
        String kafkaBootstrap,
        String topicPrefix,
        ByteString keyPrefix,
        String httpHost,
        int httpPort,
        String transactionalId,
        Duration eventsRetention,
        int maxRecordBytes,
        int statePartitions,
        short replicationFactor,
        int minInsyncReplicas,
        Duration transactionTimeout,
        long watchQueueBytes,
        int maxBatchRecords,
        int etcdMaxInboundBytes,
        int snapshotPageSize,
        int initialHistoryRevisions,
        boolean runPublisher,
        boolean runMaterializer,
        Duration retryBackoffMax,
        boolean leaderElection,
        String electionName,
        Duration electionLeaseTtl,
        Duration heartbeatInterval,
        Duration dependencyTimeout,
        EtcdSecurity etcdSecurity,
        KafkaClientSettings kafkaSettings,
        TlsFiles tls,
        String compression,
        DigestSchedule.Settings digests) {
    /**
     * The settings the topics are created with and checked against, the same for a publisher and
     * a process that only materializes, so that either may start first.
     */
    public TopicSettings topicSettings() {
        return new TopicSettings(
                WatchFanoutSerdes.eventsTopic(topicPrefix),
                WatchFanoutSerdes.stateTopic(topicPrefix),
                eventsRetention,
                maxRecordBytes,
                statePartitions,
                replicationFactor,
                minInsyncReplicas);
    }
}
