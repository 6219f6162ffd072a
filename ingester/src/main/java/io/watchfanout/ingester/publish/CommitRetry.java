package io.watchfanout.ingester.publish;

import java.time.Duration;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * Whether {@link EventsPublisher#publish} calls {@code commitTransaction()} again on the same
 * producer after it timed out ({@code max.block.ms} without the coordinator's answer to EndTxn, as
 * when the broker that coordinates the transaction dies and the coordinator moves to another).
 *
 * <p>Kafka's producer allows this retry and nothing else after such a timeout: the commit may be
 * completing already, so the call waits again for the EndTxn request it has in flight (or sends
 * it to the new coordinator) with the same producer id and epoch; it never starts a second one.
 * Whether the commit may still complete is the coordinator's to decide: a newer producer's
 * {@code initTransactions()} either waits for it or aborts it first and fences this producer.
 * Without a retry the only way on is a new producer, whose {@code initTransactions()} waits for
 * the same coordinator.
 *
 * <p>Implementations are called on the publisher thread, once per timed-out call.
 */
@FunctionalInterface
public interface CommitRetry {
    /** Never retries: the first timeout ends the publish. */
    CommitRetry NEVER = (sinceBegin, timeout) -> false;

    /**
     * @param sinceBegin time since the transaction began ({@code beginTransaction()}), at least 0
     * @param timeout the timeout {@code commitTransaction()} just threw
     * @return true to call {@code commitTransaction()} again, false to throw {@code timeout}
     */
    boolean mayRetry(Duration sinceBegin, TimeoutException timeout);
}
