package io.watchfanout.ingester.topics;

import java.time.Duration;

/**
 * The settings the ingester's topics must have (the state topic's compaction settings are
 * {@link StateCompaction}'s, the same for every deployment).
 *
 * @param eventsTopic name of the events topic
 * @param stateTopic name of the state topic
 * @param eventsRetention how long the events topic keeps records (resume window of watchers
 *     that fall out of the fan-out nodes' memory, and of the ingester after an outage)
 * @param maxRecordBytes {@code max.message.bytes} of both topics: must hold etcd's largest
 *     value twice (prev_kv rides along) plus overhead
 * @param statePartitions partitions of the state topic
 * @param replicationFactor replication factor of new topics, and the least an existing topic
 *     may have; -1 for the broker default (and no check)
 * @param minInsyncReplicas {@code min.insync.replicas} of new topics, and the least an existing
 *     topic may have; -1 for the broker default (and no check)
 */
public record TopicSettings(
        String eventsTopic,
        String stateTopic,
        Duration eventsRetention,
        int maxRecordBytes,
        int statePartitions,
        short replicationFactor,
        int minInsyncReplicas) {}
