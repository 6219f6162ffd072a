package io.watchfanout.ingester.topics;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The replication check of existing topics, without Kafka. */
class TopicManagerTest {

    private static TopicSettings asking(int replicationFactor, int minInsyncReplicas) {
        return new TopicSettings(
                "w.events", "w.state", Duration.ofDays(1), 1 << 20, 1, (short) replicationFactor, minInsyncReplicas);
    }

    @Test
    void aTopicWithFewerReplicasThanAskedIsRefused() {
        assertThatThrownBy(() -> TopicManager.checkReplication("w.events", 1, 1, asking(3, 2)))
                .isInstanceOf(TopicMisconfiguredException.class)
                .hasMessageContaining("topic w.events has replication factor 1 (expected: >= 3, --replication-factor)");
    }

    @Test
    void aTopicWithALowerMinInsyncReplicasThanAskedIsRefused() {
        assertThatThrownBy(() -> TopicManager.checkReplication("w.state", 3, 1, asking(3, 2)))
                .isInstanceOf(TopicMisconfiguredException.class)
                .hasMessageContaining("topic w.state has min.insync.replicas=1 (expected: >= 2, --min-insync-replicas");
    }

    @Test
    void aTopicRequiringMoreInsyncReplicasThanItHasIsRefusedWhateverWasAsked() {
        assertThatThrownBy(() -> TopicManager.checkReplication("w.events", 1, 2, asking(-1, -1)))
                .isInstanceOf(TopicMisconfiguredException.class)
                .hasMessageContaining("min.insync.replicas=2 but only 1 replica(s)");
    }

    @Test
    void moreThanAskedAndBrokerDefaultsPass() {
        assertThatCode(() -> TopicManager.checkReplication("w.events", 3, 2, asking(3, 2)))
                .doesNotThrowAnyException();
        assertThatCode(() -> TopicManager.checkReplication("w.events", 5, 3, asking(3, 2)))
                .doesNotThrowAnyException();
        assertThatCode(() -> TopicManager.checkReplication("w.events", 1, 1, asking(-1, -1)))
                .doesNotThrowAnyException();
    }
}
