package io.watchfanout.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PercentilesTest {
    @Test
    void nearestRank() {
        assertThat(Percentiles.of(List.of(4L, 1L, 3L, 2L), 50)).isEqualTo(2);
        assertThat(Percentiles.of(List.of(4L, 1L, 3L, 2L), 99)).isEqualTo(4);
        List<Long> hundred = new ArrayList<>();
        for (long i = 1; i <= 100; i++) {
            hundred.add(i * 100);
        }
        assertThat(Percentiles.of(hundred, 99)).isEqualTo(9900);
        assertThat(Percentiles.of(hundred, 100)).isEqualTo(10000);
        assertThat(Percentiles.of(List.of(7L), 99)).isEqualTo(7);
    }

    @Test
    void noValues() {
        assertThat(Percentiles.of(List.of(), 99)).isEqualTo(-1);
        assertThat(Percentiles.secs(List.of(), 99)).isEqualTo("-");
        assertThat(Percentiles.secs(List.of(1250L), 50)).isEqualTo("1.3 s");
    }
}
