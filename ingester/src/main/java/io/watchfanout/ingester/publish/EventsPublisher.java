package io.watchfanout.ingester.publish;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.schema.EventsRecordSerializer;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Publishes batches of events-topic records, each batch in one Kafka transaction, with an
 * idempotent transactional producer whose {@code transactional.id} is the ingester's
 * identity: a second ingester with the same id fences this one (KIP-98), and a restarted
 * one aborts whatever this one left open.
 *
 * <p>A commit that times out is called again on the same producer for as long as the caller's
 * {@link CommitRetry} allows. Every other failure, and a timeout not retried, leaves the producer
 * unusable: the caller closes it and starts over with a new one, reading the topic's tail to
 * learn what was committed. Kafka's exceptions pass
 * through as they are; which of them mean "fenced" the ingester's {@code PublishFailures} says.
 *
 * <p>Not thread-safe: owned by the publisher thread.
 */
public final class EventsPublisher implements AutoCloseable {
    /** Longer than the appends of any transaction; within delivery.timeout.ms - request.timeout.ms. */
    static final int LINGER_MS = 1000;

    private final KafkaProducer<byte[], EventsRecord> producer;
    private final String topic;
    private final long maxBlockMillis;
    private boolean initialised;

    /**
     * Creates the producer and runs {@code initTransactions()}, which fences every older
     * producer with the same transactional id and aborts its open transaction.
     *
     * @param bootstrap Kafka bootstrap servers
     * @param settings the {@code --kafka-config} client settings
     * @param topic the events topic
     * @param transactionalId the ingester's identity
     * @param maxRecordBytes the largest record to send (the topic's {@code max.message.bytes})
     * @param transactionTimeout bound of an open transaction; read_committed readers stall
     *     behind an open transaction for at most this long
     * @param overrides further producer settings: the compression, the bound of
     *     {@code initTransactions()} under an election lease, tests' own
     * @throws KafkaException when Kafka cannot be reached in {@code max.block.ms}, or (a
     *     {@code ProducerFencedException} or its kin) when a newer producer holds the id already
     */
    public EventsPublisher(
            String bootstrap,
            KafkaClientSettings settings,
            String topic,
            String transactionalId,
            int maxRecordBytes,
            Duration transactionTimeout,
            Map<String, Object> overrides) {
        this(bootstrap, settings, topic, transactionalId, maxRecordBytes, transactionTimeout, overrides, true);
    }

    /**
     * Creates the producer but does not run {@code initTransactions()}: nothing is sent for the
     * transactional id, so no other producer is fenced, until {@link #initTransactions()}. A standby
     * makes its producer so ahead of its election (the client's classes, threads and bootstrap
     * connection ready), and initialises it once it leads.
     *
     * @return a publisher whose {@link #publish} fails until {@link #initTransactions()} succeeded
     * @throws KafkaException when the producer cannot be created (bad settings)
     */
    public static EventsPublisher uninitialised(
            String bootstrap,
            KafkaClientSettings settings,
            String topic,
            String transactionalId,
            int maxRecordBytes,
            Duration transactionTimeout,
            Map<String, Object> overrides) {
        return new EventsPublisher(
                bootstrap, settings, topic, transactionalId, maxRecordBytes, transactionTimeout, overrides, false);
    }

    private EventsPublisher(
            String bootstrap,
            KafkaClientSettings settings,
            String topic,
            String transactionalId,
            int maxRecordBytes,
            Duration transactionTimeout,
            Map<String, Object> overrides,
            boolean initialise) {
        this.topic = topic;
        Properties props = new Properties();
        settings.applyTo(props);
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, transactionalId + "-publisher");
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, maxRecordBytes);
        props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) transactionTimeout.toMillis());
        // publish() flushes right after its last send, and flush() sends every batch at once
        // whatever linger.ms says. A linger longer than any transaction's sends therefore costs no
        // latency, but keeps the sender thread from shipping a transaction in small pieces while
        // they are appended: one produce request per transaction (up to batch.size) instead of many.
        props.put(ProducerConfig.LINGER_MS_CONFIG, LINGER_MS);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        props.putAll(overrides);
        maxBlockMillis =
                Long.parseLong(props.get(ProducerConfig.MAX_BLOCK_MS_CONFIG).toString());
        producer = new KafkaProducer<>(props, new ByteArraySerializer(), new EventsRecordSerializer());
        if (initialise) {
            initTransactions();
        }
    }

    /**
     * Runs {@code initTransactions()}, once: fences every older producer with the same
     * transactional id and aborts its open transaction. Blocks up to {@link #maxBlockMillis()}.
     *
     * @throws KafkaException as the constructor; the producer is then closed
     */
    public void initTransactions() {
        if (initialised) {
            return;
        }
        try {
            producer.initTransactions();
        } catch (RuntimeException e) {
            producer.close(Duration.ZERO);
            throw e;
        }
        initialised = true;
    }

    /** The producer's {@code max.block.ms}: how long {@link #initTransactions()} may block at most. */
    public long maxBlockMillis() {
        return maxBlockMillis;
    }

    /**
     * Publishes the records in one transaction and waits for its commit, without retrying a
     * commit that timed out.
     *
     * @see #publish(List, CommitRetry)
     */
    public void publish(List<KeyedRecord> records) throws InterruptedException {
        publish(records, CommitRetry.NEVER);
    }

    /**
     * Publishes the records in one transaction and waits for its commit. A
     * {@code commitTransaction()} that times out ({@code max.block.ms}) is called again, on this
     * producer, while {@code retry} says so.
     *
     * @param records records in topic order; a revision never spans two calls
     * @param retry whether a timed-out commit is waited for again
     * @throws RecordTooLargeException when a record exceeds the topic's limit
     * @throws org.apache.kafka.common.errors.TimeoutException when the commit timed out and
     *     {@code retry} declined another wait: the transaction may still commit
     * @throws KafkaException when another ingester may have taken over the id (a
     *     {@code ProducerFencedException}, {@code InvalidTxnStateException} or their kin) and for
     *     any other failure; the transaction's outcome is then unknown until the tail is read
     *     again with a new publisher
     * @throws InterruptedException when interrupted while waiting for acknowledgements
     */
    public void publish(List<KeyedRecord> records, CommitRetry retry) throws InterruptedException {
        if (records.isEmpty()) {
            return;
        }
        if (!initialised) {
            throw new IllegalStateException("publish before initTransactions()");
        }
        try {
            long began = System.nanoTime();
            producer.beginTransaction();
            List<Future<RecordMetadata>> sends = new ArrayList<>(records.size());
            for (KeyedRecord r : records) {
                sends.add(producer.send(new ProducerRecord<>(
                        topic, 0, r.timestampMillis() > 0 ? r.timestampMillis() : null, r.key(), r.value())));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sends) {
                f.get();
            }
            commit(began, retry);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new KafkaException(e.getCause());
        }
    }

    private void commit(long beganNanos, CommitRetry retry) {
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                if (!retry.mayRetry(Duration.ofNanos(System.nanoTime() - beganNanos), e)) {
                    throw e;
                }
            }
        }
    }

    /** The producer's own metrics (its {@code producer-metrics} group among them); any thread. */
    Map<org.apache.kafka.common.MetricName, ? extends org.apache.kafka.common.Metric> producerMetrics() {
        return producer.metrics();
    }

    /** Closes the producer without waiting; an open transaction is aborted by the broker or the next producer. */
    @Override
    public void close() {
        producer.close(Duration.ZERO);
    }
}
