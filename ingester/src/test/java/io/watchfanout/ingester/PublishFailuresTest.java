package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.watchfanout.ingester.publish.PublishFailure;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.topics.TopicMisconfiguredException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** Which kind of {@link PublishFailure} each exception that ends a session is, and what it says. */
class PublishFailuresTest {
    private static final IngesterConfig CONFIG = Ingesters.config("http://etcd:2379", "kafka:9092", "t", "/t/");

    private static PublishFailure classify(Exception e, boolean etcdUp, boolean kafkaUp) {
        return new PublishFailures(CONFIG, () -> etcdUp, () -> kafkaUp).classify(e);
    }

    private static PublishFailure classify(Exception e) {
        return classify(e, true, true);
    }

    @Test
    void misconfiguredTopicsOversizeEventsAndUndecodableRecordsAreFatal() {
        TopicMisconfiguredException topics = new TopicMisconfiguredException("topic t.events has 3 partitions");
        assertThat(classify(topics))
                .isInstanceOf(PublishFailure.Fatal.class)
                .hasMessage("refusing to start: topic t.events has 3 partitions")
                .hasCause(topics);
        assertThat(classify(new RecordTooLargeException("the event of key /t/k needs 9 bytes")))
                .isInstanceOf(PublishFailure.Fatal.class)
                .hasMessage("an etcd event does not fit a Kafka record: the event of key /t/k needs 9 bytes");
        RecordDeserializationException undecodable = new RecordDeserializationException(
                RecordDeserializationException.DeserializationExceptionOrigin.VALUE,
                new TopicPartition("t.events", 0),
                7,
                0,
                TimestampType.CREATE_TIME,
                null,
                null,
                null,
                "cannot deserialize",
                new IllegalStateException("bad tag"));
        assertThat(classify(undecodable))
                .isInstanceOf(PublishFailure.Fatal.class)
                .hasMessage("cannot decode the record at offset 7 of t.events-0 while reading back what was published "
                        + "(bad tag)");
    }

    @Test
    void anUnhandledCoordinatorAnswerIsPossiblyFencedAndAPlainKafkaErrorIsNot() {
        org.apache.kafka.common.KafkaException endTxn = new org.apache.kafka.common.KafkaException(
                "Unhandled error in EndTxnResponse: The server experienced an unexpected error when processing the "
                        + "request.");
        assertThat(classify(endTxn)).isInstanceOf(PublishFailure.Fenced.class).hasCause(endTxn);
        assertThat(classify(new org.apache.kafka.common.KafkaException("Failed to construct kafka producer")))
                .isInstanceOf(PublishFailure.DependencyDown.class);
    }

    @Test
    void aBumpedProducerEpochIsFencedWithKafkasExceptionAsTheCause() {
        ProducerFencedException fenced = new ProducerFencedException("epoch bumped");
        assertThat(classify(fenced))
                .isInstanceOf(PublishFailure.Fenced.class)
                .hasCause(fenced)
                .hasMessage("transactional.id 't.ingester' was taken over or its transaction aborted (" + fenced + ")");
        assertThat(classify(new KafkaException("commit failed", fenced)))
                .isInstanceOf(PublishFailure.Fenced.class)
                .hasCause(fenced);
        assertThat(classify(new InvalidTxnStateException("KIP-890"))).isInstanceOf(PublishFailure.Fenced.class);
    }

    @Test
    void anythingElseWaitsForTheDependencyItCameFrom() {
        KafkaException kafka = new KafkaException("no broker");
        assertThat(classify(new ExecutionException(kafka)))
                .isInstanceOfSatisfying(
                        PublishFailure.DependencyDown.class,
                        f -> assertThat(f.dependency()).isEqualTo("Kafka at kafka:9092"));
        assertThat(classify(new ExecutionException(Status.UNAVAILABLE.asRuntimeException())))
                .isInstanceOfSatisfying(
                        PublishFailure.DependencyDown.class,
                        f -> assertThat(f.dependency()).isEqualTo("etcd at http://etcd:2379"));
        TimeoutException bare = new TimeoutException();
        assertThat(classify(bare))
                .hasMessage("waiting for Kafka at kafka:9092 or etcd at http://etcd:2379: " + bare)
                .hasCause(bare);
        assertThat(((PublishFailure.DependencyDown) classify(bare, false, true)).dependency())
                .isEqualTo("etcd at http://etcd:2379");
        assertThat(((PublishFailure.DependencyDown) classify(bare, true, false)).dependency())
                .isEqualTo("Kafka at kafka:9092");
    }

    @Test
    void aReadBelowTheCompactionRevisionIsToldFromOtherOutOfRangeAnswers() {
        assertThat(PublishFailures.compactedRead(Status.OUT_OF_RANGE
                        .withDescription("etcdserver: mvcc: required revision has been compacted")
                        .asRuntimeException()))
                .isTrue();
        assertThat(PublishFailures.compactedRead(Status.OUT_OF_RANGE
                        .withDescription("etcdserver: mvcc: required revision is a future revision")
                        .asRuntimeException()))
                .isFalse();
        assertThat(PublishFailures.compactedRead(
                        Status.UNAVAILABLE.withDescription("compacted").asRuntimeException()))
                .isFalse();
        assertThat(PublishFailures.compactedRead(new TimeoutException())).isFalse();
    }
}
