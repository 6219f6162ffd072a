package io.watchfanout.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MetricsTextTest {
    private static final String TEXT = String.join(
            "\n",
            "# HELP watchfanout_watchers Open watch streams by encoding.",
            "# TYPE watchfanout_watchers gauge",
            "watchfanout_watchers{encoding=\"json\",} 3.0",
            "watchfanout_watchers{encoding=\"protobuf\",} 27.0",
            "watchfanout_watchers_live 30.0",
            "watchfanout_ingester_dependency_up{dependency=\"etcd\",} 0.0",
            "watchfanout_ingester_dependency_up{dependency=\"kafka\",} 1.0",
            "watchfanout_cache_ready 1.0",
            "");

    @Test
    void sumsTheSamplesOfOneMetricNotOfMetricsWithALongerName() {
        assertThat(MetricsText.sum(TEXT, "watchfanout_watchers", "")).isEqualTo(30.0);
        assertThat(MetricsText.sum(TEXT, "watchfanout_cache_ready", "")).isEqualTo(1.0);
    }

    @Test
    void selectsSamplesByLabel() {
        assertThat(MetricsText.sum(TEXT, "watchfanout_ingester_dependency_up", "dependency=\"etcd\""))
                .isEqualTo(0.0);
        assertThat(MetricsText.sum(TEXT, "watchfanout_ingester_dependency_up", "dependency=\"kafka\""))
                .isEqualTo(1.0);
    }

    @Test
    void aMissingMetricIsNaN() {
        assertThat(MetricsText.sum(TEXT, "watchfanout_feed_staleness_seconds", ""))
                .isNaN();
    }
}
