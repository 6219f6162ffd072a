package io.watchfanout.ingester;

import io.watchfanout.ingester.publish.EventsPublisher;
import io.watchfanout.ingester.publish.PublishedLog;
import io.watchfanout.ingester.topics.TopicReader;
import io.watchfanout.schema.v1.EventsRecord;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a standby makes while its campaign is out, so that once elected its first record waits only for
 * {@code initTransactions()} and a read of the events topic's tail on open connections, not for
 * new Kafka clients: its transactional producer, made but not initialised (nothing is sent for
 * the transactional id, so the leader is not fenced), and the consumer that reads the tail,
 * which reads it once now (the result is dropped: only a read after this replica's own
 * {@code initTransactions()} is final).
 *
 * <p>The producer's {@code max.block.ms} was fixed when it was made; it is used only when the
 * leadership left at the election covers it (the bound every producer of an elected replica keeps:
 * a replica deposed while it waits for Kafka must not come back and fence the new leader).
 * Otherwise it is dropped and the session makes one with the bound of the moment.
 *
 * <p>Not thread-safe: the publisher thread's, for one session.
 */
final class WarmStandby implements AutoCloseable {
    // The Ingester's logger, as the rest of the publisher's lines.
    private static final Logger log = LoggerFactory.getLogger(Ingester.class);

    private EventsPublisher producer;
    private final TopicReader<EventsRecord> tailReader;

    private WarmStandby(EventsPublisher producer, TopicReader<EventsRecord> tailReader) {
        this.producer = producer;
        this.tailReader = tailReader;
    }

    /**
     * Makes the producer and the tail's reader and reads the tail once.
     *
     * @param producer makes an uninitialised producer ({@link EventsPublisher#uninitialised})
     * @param published the events topic's reader of record
     * @throws org.apache.kafka.common.KafkaException when a client cannot be made (bad settings);
     *     a failed read is only logged: Kafka may come back before the election
     */
    static WarmStandby prepare(Supplier<EventsPublisher> producer, PublishedLog published) {
        EventsPublisher made = producer.get();
        TopicReader<EventsRecord> reader;
        try {
            reader = published.tailReader();
        } catch (RuntimeException e) {
            made.close();
            throw e;
        }
        try {
            published.lastEventsRevision(reader);
        } catch (RuntimeException e) {
            log.debug("standby's first read of the events topic failed ({}); read again once elected", e.toString());
        }
        return new WarmStandby(made, reader);
    }

    /**
     * The prepared producer, initialised, when its {@code max.block.ms} fits in
     * {@code leadershipLeft}; else null, and the caller makes one. At most once.
     *
     * @throws org.apache.kafka.common.KafkaException when {@code initTransactions()} fails (the
     *     producer is then closed)
     */
    EventsPublisher takeProducer(Duration leadershipLeft) {
        EventsPublisher p = producer;
        producer = null;
        if (p == null) {
            return null;
        }
        if (leadershipLeft.toMillis() < p.maxBlockMillis()) {
            p.close();
            return null;
        }
        p.initTransactions();
        return p;
    }

    /** The open reader of the events topic's tail; closed with this. */
    TopicReader<EventsRecord> tailReader() {
        return tailReader;
    }

    /** Closes the reader, and the producer unless it was taken. */
    @Override
    public void close() {
        if (producer != null) {
            producer.close();
            producer = null;
        }
        tailReader.close();
    }
}
