package io.watchfanout.kube.kafka.streams;

import java.util.Collection;

/**
 * Makes sure that topics exist before a record is written to them: Kafka Streams creates its
 * internal topics, never its sink topics, and a per-resource topic is only known when its resource
 * is (a CRD's resource from the CRD's event on).
 *
 * <p>Implementations are thread-safe (shared by the stream threads) and remember what exists, so
 * that a call for known topics costs a set lookup.
 */
public interface TopicEnsurer {

    /** How a topic keeps its records. */
    enum Retention {
        /** The broker's retention by time or size: change and errors topics. */
        DELETE,
        /** Compacted: the latest value per key, a tombstone removing the key. */
        COMPACT
    }

    /**
     * Creates those of {@code topics} that do not exist yet; returns once they exist.
     *
     * @throws org.apache.kafka.common.KafkaException when a topic cannot be created (the stream
     *     thread fails and its task resumes from the last commit)
     */
    void ensure(Collection<String> topics, Retention retention);
}
