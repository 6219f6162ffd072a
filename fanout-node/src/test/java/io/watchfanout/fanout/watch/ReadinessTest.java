package io.watchfanout.fanout.watch;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReadinessTest {
    @Test
    void aRebuildThatStartedOverSaysWhyUntilItIsDone() {
        Readiness r = new Readiness();
        assertThat(r.notReady()).isEqualTo("cache is rebuilding from Kafka");
        r.rebuildDelayed("started over (1 time) because the read of w.state took 7.4 s");
        assertThat(r.notReady())
                .isEqualTo(
                        "cache is rebuilding from Kafka: it started over (1 time) because the read of w.state took 7.4 s");
        assertThat(r.notServing())
                .isEqualTo("the cache is rebuilding from Kafka: it started over (1 time) because the read of w.state "
                        + "took 7.4 s; retry, or ask another node");
        r.markRebuilt();
        assertThat(r.notReady()).isNull();
        assertThat(r.notServing()).isNull();
    }
}
