package io.watchfanout.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StateScanTest {
    private final AtomicLong nanos = new AtomicLong(5_000_000_000L);
    private final AtomicLong millis = new AtomicLong(1_700_000_000_000L);

    private StateScan begin(long retentionMillis) {
        return StateScan.begin(Duration.ofMillis(retentionMillis), nanos::get, millis::get);
    }

    private void advance(long monotonicMillis, long wallMillis) {
        nanos.addAndGet(monotonicMillis * 1_000_000);
        millis.addAndGet(wallMillis);
    }

    @Test
    void aReadIsTrustedWhileItTakesLessThanHalfTheRetention() {
        StateScan scan = begin(10_000);
        assertThat(scan.budget()).isEqualTo(Duration.ofSeconds(5));
        advance(4_999, 4_999);
        assertThat(scan.trustworthy()).isTrue();
        advance(1, 1);
        assertThat(scan.trustworthy()).isFalse();
    }

    @Test
    void aPauseThatOnlyTheWallClockSawCounts() {
        StateScan scan = begin(10_000);
        // A suspended VM: the monotonic clock stood still, the wall clock (set by NTP) did not.
        advance(100, 60_000);
        assertThat(scan.elapsed()).isEqualTo(Duration.ofMinutes(1));
        assertThat(scan.trustworthy()).isFalse();
    }

    @Test
    void aWallClockSteppedBackCountsForNothing() {
        StateScan scan = begin(10_000);
        advance(6_000, -3_600_000);
        assertThat(scan.elapsed()).isEqualTo(Duration.ofSeconds(6));
        assertThat(scan.trustworthy()).isFalse();
    }

    @Test
    void theShortestRetentionSeenCounts() {
        StateScan scan = begin(10_000);
        advance(3_000, 3_000);
        scan.retentionNow(Duration.ofMinutes(10));
        assertThat(scan.deleteRetention()).isEqualTo(Duration.ofSeconds(10));
        assertThat(scan.trustworthy()).isTrue();
        scan.retentionNow(Duration.ofSeconds(4));
        assertThat(scan.deleteRetention()).isEqualTo(Duration.ofSeconds(4));
        assertThat(scan.trustworthy()).isFalse();
    }

    @Test
    void noReadIsTrustedWithoutRetention() {
        StateScan scan = begin(0);
        assertThat(scan.trustworthy()).isFalse();
        assertThatThrownBy(() -> begin(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theReasonNamesTheTopicTheTimesAndTheSetting() {
        StateScan scan = begin(4_000);
        advance(3_000, 3_000);
        assertThat(scan.outlived("w.state", 0.25))
                .contains("w.state")
                .contains("took 3.0 s for 25 % of it (about 12.0 s for all of it)")
                .contains("delete.retention.ms=4000 (4.0 s)");
        assertThat(scan.outlived("w.state", 1)).contains("took 3.0 s, not less than half");
    }
}
