package io.watchfanout.ingester;

import io.watchfanout.ingester.publish.CommitRetry;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How long the publisher waits again for a Kafka commit that timed out, on the same producer
 * ({@link CommitRetry}): while the ingester runs, its transaction is younger than
 * {@code --transaction-timeout} (by then the coordinator aborts it and bumps the producer's
 * epoch, so a further wait could only end fenced), and, under {@code --leader-election}, while this
 * replica still leads ({@code leadershipLeft() > 0}). A replica whose lease lapsed stops waiting:
 * another may be elected and fence it, and what it then does (give way, campaign again) is the
 * publisher loop's. Each wait lasts the producer's {@code max.block.ms}.
 *
 * <p>A broker SIGKILL is what this is for: when the dead broker coordinated the transaction, its
 * EndTxn goes unanswered until the controller fences the broker ({@code broker.session.timeout.ms})
 * and another broker loads the transaction log. Waiting on for that on the same producer costs
 * nothing more; giving up meant a new producer, whose {@code initTransactions()} waits for the same
 * coordinator and, under an election, may time out once more.
 *
 * <p>Thread-safe if the suppliers are; called on the publisher thread.
 */
final class CommitRetryBound implements CommitRetry {
    // The Ingester's logger: the publisher's lines keep the name they have always been logged under.
    private static final Logger log = LoggerFactory.getLogger(Ingester.class);

    private final Supplier<Duration> leadershipLeft;
    private final Duration transactionTimeout;
    private final BooleanSupplier running;

    /**
     * @param leadershipLeft how much longer this replica certainly leads (zero once it does not),
     *     or null without leader election
     * @param transactionTimeout the producer's {@code transaction.timeout.ms}
     * @param running false once the ingester stops
     */
    CommitRetryBound(Supplier<Duration> leadershipLeft, Duration transactionTimeout, BooleanSupplier running) {
        this.leadershipLeft = leadershipLeft;
        this.transactionTimeout = transactionTimeout;
        this.running = running;
    }

    @Override
    public boolean mayRetry(Duration sinceBegin, TimeoutException timeout) {
        String refusal = refusal(sinceBegin);
        if (refusal != null) {
            log.warn("the Kafka commit timed out ({}) and is not waited for again: {}", timeout.getMessage(), refusal);
            return false;
        }
        log.warn(
                "the Kafka commit timed out ({}) {} ms after its transaction began; waiting for it again on the same "
                        + "producer",
                timeout.getMessage(),
                sinceBegin.toMillis());
        return true;
    }

    /**
     * Why a commit that timed out {@code sinceBegin} after its transaction began is not waited for
     * again, or null when it is.
     */
    String refusal(Duration sinceBegin) {
        if (!running.getAsBoolean()) {
            return "the ingester stops";
        }
        if (sinceBegin.compareTo(transactionTimeout) >= 0) {
            return "the transaction is older than --transaction-timeout " + transactionTimeout.toMillis()
                    + " ms, so Kafka aborts it";
        }
        if (leadershipLeft != null && leadershipLeft.get().isZero()) {
            return "this replica no longer certainly leads (its lease was not renewed in time)";
        }
        return null;
    }
}
