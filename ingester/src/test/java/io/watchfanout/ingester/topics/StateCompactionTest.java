package io.watchfanout.ingester.topics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which settings of an existing state topic the ingester changes, without Kafka. */
class StateCompactionTest {

    @Test
    void aTopicOfAnOlderIngesterGetsTheShortSegmentAndTheLowRatio() {
        // What an older ingester created: segment.ms 1 h, the rest Kafka's defaults.
        Map<String, String> old = Map.of(
                "segment.ms", "3600000",
                "min.cleanable.dirty.ratio", "0.5",
                "min.compaction.lag.ms", "0");
        assertThat(StateCompaction.toChange(old))
                .containsExactly(Map.entry("segment.ms", "60000"), Map.entry("min.cleanable.dirty.ratio", "0.1"));
    }

    @Test
    void aTopicThatCompactsSoonerKeepsItsValues() {
        assertThat(StateCompaction.toChange(Map.of(
                        "segment.ms", "10000",
                        "min.cleanable.dirty.ratio", "0.05",
                        "min.compaction.lag.ms", "0")))
                .isEmpty();
        assertThat(StateCompaction.toChange(StateCompaction.settings())).isEmpty();
    }

    @Test
    void aMissingOrUnreadableValueOrACompactionLagIsSet() {
        assertThat(StateCompaction.toChange(Map.of(
                        "segment.ms", "sixty",
                        "min.cleanable.dirty.ratio", "0.1",
                        "min.compaction.lag.ms", "300000")))
                .containsExactly(Map.entry("segment.ms", "60000"), Map.entry("min.compaction.lag.ms", "0"));
        assertThat(StateCompaction.toChange(Map.of())).isEqualTo(StateCompaction.settings());
    }
}
