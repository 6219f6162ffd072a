package io.watchfanout.ingester.materializer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

class ThreadReplacementsTest {
    private final AtomicLong now = new AtomicLong();
    private final ThreadReplacements replacements = new ThreadReplacements(now::get);

    /** As Kafka Streams reports a commit that failed after a cut: wrapped twice. */
    private static Throwable commitFailed(Throwable cause) {
        return new StreamsException("Error encountered trying to commit a transaction", new KafkaException(cause));
    }

    @Test
    void aTransactionLeftUnusableByACutReplacesTheThread() {
        assertThat(replacements.replace(commitFailed(new InvalidTxnStateException("invalid transition"))))
                .isTrue();
        assertThat(replacements.replace(new StreamsException(new TimeoutException("commit timed out"))))
                .isTrue();
    }

    @Test
    void badDataOrABugStopsTheMaterializer() {
        assertThat(replacements.replace(new StreamsException(new SerializationException("bad record"))))
                .isFalse();
        assertThat(replacements.replace(new StreamsException(
                        "deserialization", new SerializationException(new TimeoutException("inside")))))
                .isFalse();
        assertThat(replacements.replace(new IllegalStateException("a bug"))).isFalse();
    }

    @Test
    void aFailureThatRepeatsStopsTheMaterializerAfterThreeReplacementsInTheWindow() {
        Throwable cut = commitFailed(new InvalidTxnStateException("invalid transition"));
        for (int i = 0; i < ThreadReplacements.MAX_REPLACEMENTS; i++) {
            assertThat(replacements.replace(cut)).isTrue();
            now.addAndGet(1_000_000_000L);
        }
        assertThat(replacements.replace(cut)).isFalse();

        now.addAndGet(ThreadReplacements.WINDOW.toNanos());
        assertThat(replacements.replace(cut)).isTrue();
    }
}
