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
import java.util.Objects;

/**
 * Settings of one ingester, one record per part, as parsed from the command line by
 * {@link IngesterMain} ({@link IngesterFlags} defines and checks each flag once).
 *
 * @param etcd the etcd source: where, what and how much at once
 * @param kafka the Kafka cluster and topics written to
 * @param topics how the topics are created and what existing ones must have
 * @param history where the history of an empty events topic starts, and how it is read
 * @param commit the publisher's transactions and heartbeats
 * @param roles what this process runs: publisher, materializer, leader election
 * @param recovery retries and the probes of etcd and Kafka
 * @param operations the operations endpoints ({@code /metrics}, {@code /readyz}, {@code /livez})
 * @param digests how digests of the watched range are read and published
 */
public record IngesterConfig(
        Etcd etcd,
        Kafka kafka,
        Topics topics,
        History history,
        Commit commit,
        Roles roles,
        Recovery recovery,
        Operations operations,
        DigestSchedule.Settings digests) {
    /** Checks that no part is null. */
    public IngesterConfig {
        Objects.requireNonNull(etcd, "etcd");
        Objects.requireNonNull(kafka, "kafka");
        Objects.requireNonNull(topics, "topics");
        Objects.requireNonNull(history, "history");
        Objects.requireNonNull(commit, "commit");
        Objects.requireNonNull(roles, "roles");
        Objects.requireNonNull(recovery, "recovery");
        Objects.requireNonNull(operations, "operations");
        Objects.requireNonNull(digests, "digests");
    }

    /**
     * The etcd source.
     *
     * @param endpoints etcd client URLs; empty for a process that only materializes
     * @param keyPrefix the etcd key prefix to publish; empty for every key
     * @param security TLS and user of every etcd call; {@link EtcdSecurity#NONE} for none
     * @param maxInboundBytes largest gRPC message accepted from etcd
     * @param watchQueueBytes bound of the keys and values waiting between etcd and Kafka
     */
    public record Etcd(
            List<String> endpoints,
            ByteString keyPrefix,
            EtcdSecurity security,
            int maxInboundBytes,
            long watchQueueBytes) {
        /** Copies the list. */
        public Etcd {
            endpoints = List.copyOf(endpoints);
            Objects.requireNonNull(keyPrefix, "keyPrefix");
            Objects.requireNonNull(security, "security");
        }
    }

    /**
     * The Kafka cluster and what is written to it.
     *
     * @param bootstrap Kafka bootstrap servers
     * @param settings client settings of every Kafka client ({@code --kafka-config});
     *     {@link KafkaClientSettings#NONE} for none
     * @param topicPrefix prefix of the topics {@code <prefix>.events} and {@code <prefix>.state}
     * @param maxRecordBytes largest events or state record ({@code max.message.bytes})
     * @param compression Kafka's {@code compression.type} of the events the publisher and the state
     *     materializer write: none, gzip, snappy, lz4 or zstd
     */
    public record Kafka(
            String bootstrap,
            KafkaClientSettings settings,
            String topicPrefix,
            int maxRecordBytes,
            String compression) {
        /** Checks that no field is null. */
        public Kafka {
            Objects.requireNonNull(bootstrap, "bootstrap");
            Objects.requireNonNull(settings, "settings");
            Objects.requireNonNull(topicPrefix, "topicPrefix");
            Objects.requireNonNull(compression, "compression");
        }
    }

    /**
     * How topics are created, and the least existing ones must have.
     *
     * @param eventsRetention retention of the events topic when this ingester creates it
     * @param statePartitions partitions of the state topic when this ingester creates it
     * @param replicationFactor replication factor of created topics, and the least existing ones
     *     must have; -1 for the broker default
     * @param minInsyncReplicas {@code min.insync.replicas} of created topics, and the least
     *     existing ones must have; -1 for the broker default
     */
    public record Topics(
            Duration eventsRetention, int statePartitions, short replicationFactor, int minInsyncReplicas) {
        /** Checks that no field is null. */
        public Topics {
            Objects.requireNonNull(eventsRetention, "eventsRetention");
        }
    }

    /**
     * Where the published history starts, and how etcd's state is read.
     *
     * @param initialRevisions on an empty events topic, how many revisions before etcd's current
     *     one the history may start at most (it starts at etcd's oldest revision within them); 0
     *     for the current state only
     * @param snapshotPageSize keys per range request of an initial load or resync
     */
    public record History(int initialRevisions, int snapshotPageSize) {}

    /**
     * The publisher's transactions.
     *
     * @param transactionalId the ingester's identity: ingesters with the same id fence each other
     * @param transactionTimeout bound of one open Kafka transaction
     * @param maxBatchRecords records per Kafka transaction before it is cut (between revisions)
     * @param heartbeatInterval how long the publisher may publish nothing before it publishes a
     *     heartbeat (a progress record that repeats the last revision)
     */
    public record Commit(
            String transactionalId, Duration transactionTimeout, int maxBatchRecords, Duration heartbeatInterval) {
        /** Checks that no field is null. */
        public Commit {
            Objects.requireNonNull(transactionalId, "transactionalId");
            Objects.requireNonNull(transactionTimeout, "transactionTimeout");
            Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
        }
    }

    /**
     * What this process runs.
     *
     * @param publisher whether it watches etcd and publishes to the events topic; a process
     *     without it runs only the state materializer
     * @param materializer whether it also runs the state materializer
     * @param leaderElection whether replicas elect one publisher through etcd's election API
     * @param electionName the election's name (an etcd key prefix)
     * @param electionLeaseTtl the election lease's time-to-live
     */
    public record Roles(
            boolean publisher,
            boolean materializer,
            boolean leaderElection,
            String electionName,
            Duration electionLeaseTtl) {
        /** Checks that no field is null. */
        public Roles {
            Objects.requireNonNull(electionName, "electionName");
            Objects.requireNonNull(electionLeaseTtl, "electionLeaseTtl");
        }
    }

    /**
     * Retries, and the probes that tell a lost dependency.
     *
     * @param retryBackoffMax longest wait between retries of etcd or Kafka
     * @param dependencyTimeout how long a probe of etcd or Kafka may take before the ingester
     *     reports that dependency lost (not ready); probes run every second
     */
    public record Recovery(Duration retryBackoffMax, Duration dependencyTimeout) {
        /** Checks that no field is null. */
        public Recovery {
            Objects.requireNonNull(retryBackoffMax, "retryBackoffMax");
            Objects.requireNonNull(dependencyTimeout, "dependencyTimeout");
        }
    }

    /**
     * The operations endpoints.
     *
     * @param host their address
     * @param port their port; 0 for any free port, -1 for none
     * @param tls the certificate, key and client CAs of TLS on their port, or null for plaintext
     */
    public record Operations(String host, int port, TlsFiles tls) {
        /** Checks that the address is given. */
        public Operations {
            Objects.requireNonNull(host, "host");
        }
    }

    /**
     * The settings the topics are created with and checked against, the same for a publisher and
     * a process that only materializes, so that either may start first.
     */
    public TopicSettings topicSettings() {
        return new TopicSettings(
                WatchFanoutSerdes.eventsTopic(kafka.topicPrefix()),
                WatchFanoutSerdes.stateTopic(kafka.topicPrefix()),
                topics.eventsRetention(),
                kafka.maxRecordBytes(),
                topics.statePartitions(),
                topics.replicationFactor(),
                topics.minInsyncReplicas());
    }
}
