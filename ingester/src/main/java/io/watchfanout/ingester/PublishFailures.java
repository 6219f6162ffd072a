package io.watchfanout.ingester;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.watchfanout.ingester.publish.PublishFailure;
import io.watchfanout.ingester.topics.TopicMisconfiguredException;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;

/**
 * The one place that tells what an exception of Kafka, etcd (jetcd, gRPC) or the ingester's own
 * parts means to the publisher: a {@link PublishFailure} kind for whatever ends a session, and
 * whether an etcd read failed on a compacted revision.
 *
 * <p>Thread-safe (immutable; the probe state it consults is).
 */
final class PublishFailures {
    private final String transactionalId;
    private final String kafkaName;
    private final String etcdName;
    private final BooleanSupplier etcdUp;
    private final BooleanSupplier kafkaUp;

    /**
     * @param config the ingester's settings (the names of Kafka and etcd, the transactional id)
     * @param etcdUp whether etcd answered its last probe
     * @param kafkaUp whether Kafka answered its last probe
     */
    PublishFailures(IngesterConfig config, BooleanSupplier etcdUp, BooleanSupplier kafkaUp) {
        this.transactionalId = config.commit().transactionalId();
        this.kafkaName = "Kafka at " + config.kafka().bootstrap();
        this.etcdName = "etcd at " + String.join(",", config.etcd().endpoints());
        this.etcdUp = etcdUp;
        this.kafkaUp = kafkaUp;
    }

    /**
     * The kind of a failure that ended a session: {@link PublishFailure.Fatal} for misconfigured
     * topics, an event that does not fit a record and an undecodable record read back;
     * {@link PublishFailure.Fenced} for Kafka's errors of a bumped producer epoch; and
     * {@link PublishFailure.DependencyDown} for anything else, naming the dependency.
     *
     * @param e the exception, as thrown to the session (not unwrapped)
     * @return the failure, with {@code e} (or for fencing, Kafka's exception) as its cause
     */
    PublishFailure classify(Exception e) {
        if (e instanceof PublishFailure f) {
            return f;
        }
        if (e instanceof TopicMisconfiguredException) {
            return new PublishFailure.Fatal("refusing to start: " + e.getMessage(), e);
        }
        if (e instanceof RecordTooLargeException) {
            return new PublishFailure.Fatal("an etcd event does not fit a Kafka record: " + e.getMessage(), e);
        }
        if (e instanceof RecordDeserializationException d) {
            // Fail closed: without the records it has published the ingester cannot tell where to resume.
            return new PublishFailure.Fatal(
                    "cannot decode the record at offset " + d.offset() + " of " + d.topicPartition()
                            + " while reading back what was published ("
                            + (d.getCause() != null ? d.getCause().getMessage() : d.getMessage()) + ")",
                    e);
        }
        Throwable fencing = fencing(e);
        if (fencing != null) {
            return new PublishFailure.Fenced(
                    "transactional.id '" + transactionalId + "' was taken over or its transaction aborted (" + fencing
                            + ")",
                    fencing);
        }
        return new PublishFailure.DependencyDown(dependencyOf(e), e);
    }

    /**
     * Kafka's exception that says the producer's epoch was bumped, or null. With Kafka 4's
     * transactions (KIP-890) a producer whose epoch was bumped by a newer one sees
     * InvalidTxnStateException rather than ProducerFencedException. A coordinator that aborted a
     * transaction on timeout bumps the epoch too, so these mean "possibly fenced".
     */
    private static Throwable fencing(Throwable e) {
        if (e instanceof ProducerFencedException
                || e instanceof InvalidProducerEpochException
                || e instanceof InvalidTxnStateException
                || e instanceof TransactionalIdAuthorizationException) {
            return e;
        }
        if (e instanceof KafkaException && e.getCause() instanceof ProducerFencedException) {
            return e.getCause();
        }
        // A coordinator answer the producer has no case for (Kafka's "Unhandled error in
        // EndTxnResponse: ... unexpected error"), as seen when a newer producer's initTransactions
        // bumps the epoch while this one commits: possibly fenced, so it goes through the check for
        // another ingester rather than straight into a new producer, whose initTransactions would
        // fence the newer one in turn. Kafka gives it no type of its own, only this wording.
        if (e instanceof KafkaException
                && !(e instanceof org.apache.kafka.common.errors.RetriableException)
                && String.valueOf(e.getMessage()).startsWith("Unhandled error in ")) {
            return e;
        }
        return null;
    }

    /**
     * Which of the two services a failure came from, for the line that says what the
     * publisher waits for: by the client library's exception types, and for the bare timeouts
     * both libraries' futures throw, by what the dependency probes found.
     */
    private String dependencyOf(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof KafkaException) {
                return kafkaName;
            }
            if (t instanceof EtcdException || t instanceof StatusRuntimeException) {
                return etcdName;
            }
        }
        if (!etcdUp.getAsBoolean()) {
            return etcdName;
        }
        return kafkaUp.getAsBoolean() ? kafkaName + " or " + etcdName : kafkaName;
    }

    /**
     * Whether an etcd range read failed because its revision is below etcd's compaction
     * revision. etcd answers it with OUT_OF_RANGE, as it does a read of a future revision; the
     * text of the answer ("required revision has been compacted") tells the two apart.
     *
     * @param cause the cause of the read's {@code ExecutionException}
     */
    static boolean compactedRead(Throwable cause) {
        if (cause instanceof EtcdException e) {
            return e.getErrorCode() == ErrorCode.OUT_OF_RANGE
                    && String.valueOf(e.getMessage()).contains("compacted");
        }
        Status status = Status.fromThrowable(cause);
        return status.getCode() == Status.Code.OUT_OF_RANGE
                && String.valueOf(status.getDescription()).contains("compacted");
    }
}
