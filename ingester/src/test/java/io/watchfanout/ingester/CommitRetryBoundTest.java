package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * When a Kafka commit that timed out is waited for again on the same producer: while the ingester
 * runs, within the transaction timeout, and under leader election only while the lease holds.
 */
class CommitRetryBoundTest {
    private static final Duration TRANSACTION_TIMEOUT = Duration.ofSeconds(60);
    private static final TimeoutException TIMEOUT =
            new TimeoutException("Timeout expired after 2900ms while awaiting EndTxn(true)");

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicReference<Duration> leadershipLeft = new AtomicReference<>(Duration.ofSeconds(3));

    @Test
    void aLeaderWaitsAgainWhileItsLeaseHoldsAndStopsOnceItLapses() {
        CommitRetryBound bound = new CommitRetryBound(leadershipLeft::get, TRANSACTION_TIMEOUT, running::get);
        assertThat(bound.mayRetry(Duration.ofMillis(2900), TIMEOUT)).isTrue();
        leadershipLeft.set(Duration.ofMillis(1));
        assertThat(bound.mayRetry(Duration.ofMillis(5800), TIMEOUT)).isTrue();
        // Deposed (or no longer certain to lead): another replica may be elected and must not be
        // kept waiting by this one's commit.
        leadershipLeft.set(Duration.ZERO);
        assertThat(bound.mayRetry(Duration.ofMillis(8700), TIMEOUT)).isFalse();
        assertThat(bound.refusal(Duration.ofMillis(8700))).contains("no longer certainly leads");
    }

    @Test
    void withoutAnElectionTheTransactionTimeoutBoundsTheWaits() {
        CommitRetryBound bound = new CommitRetryBound(null, TRANSACTION_TIMEOUT, running::get);
        assertThat(bound.mayRetry(Duration.ofSeconds(10), TIMEOUT)).isTrue();
        assertThat(bound.mayRetry(Duration.ofSeconds(59), TIMEOUT)).isTrue();
        // The coordinator aborts the transaction by then and bumps the epoch: a wait could only end fenced.
        assertThat(bound.mayRetry(TRANSACTION_TIMEOUT, TIMEOUT)).isFalse();
        assertThat(bound.refusal(Duration.ofSeconds(70))).contains("--transaction-timeout 60000 ms");
    }

    @Test
    void aLeaderAlsoStopsAtTheTransactionTimeout() {
        CommitRetryBound bound = new CommitRetryBound(leadershipLeft::get, TRANSACTION_TIMEOUT, running::get);
        assertThat(bound.mayRetry(Duration.ofSeconds(61), TIMEOUT)).isFalse();
    }

    @Test
    void aStoppingIngesterDoesNotWait() {
        CommitRetryBound elected = new CommitRetryBound(leadershipLeft::get, TRANSACTION_TIMEOUT, running::get);
        CommitRetryBound alone = new CommitRetryBound(null, TRANSACTION_TIMEOUT, running::get);
        running.set(false);
        assertThat(elected.mayRetry(Duration.ofSeconds(3), TIMEOUT)).isFalse();
        assertThat(alone.mayRetry(Duration.ofSeconds(3), TIMEOUT)).isFalse();
        assertThat(alone.refusal(Duration.ofSeconds(3))).isEqualTo("the ingester stops");
    }
}
