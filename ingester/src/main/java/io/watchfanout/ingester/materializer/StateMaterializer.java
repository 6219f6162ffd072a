package io.watchfanout.ingester.materializer;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.schema.WatchFanoutSerdes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state materializer: a Kafka Streams application ({@code exactly_once_v2}) that keeps
 * the compacted state topic in step with the events topic — latest key-value per key,
 * tombstone on delete, and a checkpoint under the empty key with the revision and the
 * events-topic offset it is complete to. Each Streams transaction commits the key-values,
 * the checkpoint and the consumed offset together.
 *
 * <p>An undecodable events record stops it (Kafka Streams' default
 * {@code LogAndFailExceptionHandler}): the state topic never skips data. The failure is
 * reported to the callback given at construction. A transaction left unusable by a network cut
 * only replaces the stream thread, a few times at most ({@code ThreadReplacements}).
 *
 * <p>Thread-safe: start and close from any thread.
 */
public final class StateMaterializer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StateMaterializer.class);

    private final KafkaStreams streams;
    /** Kafka Streams wants a state directory even for a stateless topology; ours is removed at close. */
    private final Path stateDir;
    /** How often the materializer commits its transaction, in milliseconds. */
    static final long STATE_COMMIT_INTERVAL_MS = 1000;
    /**
     * The main consumer's setting that makes its close send a LeaveGroup request. Kafka Streams
     * turns it off by default (its {@code CloseOptions.leaveGroup} only removes static members), so
     * a closed materializer stays a member of its group until its session times out (45 s); the
     * next leader's materializer then waits in its first rebalance all that time, and an ingester
     * stopped meanwhile spent the whole {@link #CLOSE_TIMEOUT} in close, silently. Only one
     * materializer runs at a time (the leader's), so nobody gains from the old member lingering.
     */
    static final String LEAVE_GROUP_ON_CLOSE = "internal.leave.group.on.close";
    /** Bound of {@link #close()}: a commit of the last second's projection and a leave-group request. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);
    /**
     * Bound of {@link #close()} for a materializer that holds no partition (no task): it has
     * nothing to commit, and its consumer's close would otherwise wait for a pending join, which
     * after a crashed predecessor lasts until that one's session expires (45 s).
     */
    private static final Duration IDLE_CLOSE_TIMEOUT = Duration.ofSeconds(2);
    /** A close slower than this is logged, so that a slow stop is never silent. */
    private static final long SLOW_CLOSE_MILLIS = 1000;

    /**
     * @param bootstrap Kafka bootstrap servers
     * @param settings the {@code --kafka-config} client settings, for every client of Kafka Streams
     * @param topicPrefix the topic prefix; the application id is {@code <prefix>.state-materializer}
     * @param maxRecordBytes the largest record to write
     * @param compression {@code compression.type} of the state records: none, gzip, snappy, lz4 or zstd
     * @param onFailure called once when the materializer stops on an error
     */
    public StateMaterializer(
            String bootstrap,
            KafkaClientSettings settings,
            String topicPrefix,
            int maxRecordBytes,
            String compression,
            Consumer<Throwable> onFailure) {
        Properties props = new Properties();
        settings.applyTo(props);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, topicPrefix + ".state-materializer");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        // Exactly-once commits every 100 ms by default: 10 transactions a second even when idle
        // is most of Kafka's work at a low event rate. The state topic only serves rebuilds, which
        // tail the events topic from the checkpoint anyway, so one second of staleness costs nothing.
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, STATE_COMMIT_INTERVAL_MS);
        props.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), maxRecordBytes);
        props.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), compression);
        props.put(StreamsConfig.mainConsumerPrefix(LEAVE_GROUP_ON_CLOSE), true);
        try {
            stateDir = Files.createTempDirectory("watchfanout-materializer");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the Kafka Streams state directory", e);
        }
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        streams = new KafkaStreams(topology(topicPrefix), props);
        ThreadReplacements replacements = new ThreadReplacements(System::nanoTime);
        streams.setUncaughtExceptionHandler(e -> {
            if (replacements.replace(e)) {
                log.warn(
                        "state materializer's stream thread failed; replacing it (a new producer aborts the open"
                                + " transaction and resumes from the last commit): {}",
                        e.toString());
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
            }
            log.error("state materializer stopped: {}", e.toString(), e);
            onFailure.accept(e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    }

    /** The topology: events topic → {@link StateProjection} → state topic. */
    public static Topology topology(String topicPrefix) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(
                        WatchFanoutSerdes.eventsTopic(topicPrefix),
                        Consumed.with(Serdes.ByteArray(), WatchFanoutSerdes.eventsRecord()))
                .process(() -> new StateProjection(Duration.ofMillis(STATE_COMMIT_INTERVAL_MS)))
                .to(
                        WatchFanoutSerdes.stateTopic(topicPrefix),
                        Produced.with(Serdes.ByteArray(), WatchFanoutSerdes.stateRecord()));
        return builder.build();
    }

    /** Starts the stream thread. */
    public void start() {
        streams.start();
    }

    /**
     * True when no stream thread has an active task: records processed since the last commit
     * exist only in an active task. A partition assigned after this answer has had no time to
     * be processed much, and what is not committed is processed again by the next materializer.
     */
    private boolean holdsNoTask() {
        try {
            return streams.metadataForLocalThreads().stream()
                    .allMatch(t -> t.activeTasks().isEmpty());
        } catch (RuntimeException e) {
            return false; // not started, or already stopping: the full bound
        }
    }

    /** The Streams client's state (RUNNING once it processes). */
    public KafkaStreams.State state() {
        return streams.state();
    }

    /**
     * Events records not yet projected: the largest {@code records-lag-max} of the Streams main
     * consumer's partitions (Kafka's own measure, over its last fetches), NaN before the first
     * fetch. Any thread.
     */
    public double lagRecords() {
        double lag = Double.NaN;
        for (var e : streams.metrics().entrySet()) {
            org.apache.kafka.common.MetricName name = e.getKey();
            String client = name.tags().getOrDefault("client-id", "");
            if (name.name().equals("records-lag-max")
                    && name.group().equals("consumer-fetch-manager-metrics")
                    && client.endsWith("-consumer")
                    && !client.endsWith("-restore-consumer")
                    && e.getValue().metricValue() instanceof Double v
                    && !v.isNaN()) {
                lag = Double.isNaN(lag) ? v : Math.max(lag, v);
            }
        }
        return lag;
    }

    /**
     * Stops the stream thread, committing what it processed, and leaves the consumer group
     * ({@link #LEAVE_GROUP_ON_CLOSE}), within {@link #CLOSE_TIMEOUT}.
     */
    @Override
    public void close() {
        long start = System.nanoTime();
        boolean idle = holdsNoTask();
        boolean closed = streams.close(idle ? IDLE_CLOSE_TIMEOUT : CLOSE_TIMEOUT);
        long millis = (System.nanoTime() - start) / 1_000_000;
        if (!closed && idle) {
            // Typically a rebalance that waits for a crashed materializer's session to expire:
            // the consumer's close waits for its pending join, which nothing here needs.
            log.info("state materializer held no partition; its close stopped waiting after {} ms", millis);
        } else if (!closed) {
            log.warn("state materializer not stopped within {} ms; the broker aborts its open transaction", millis);
        } else if (millis >= SLOW_CLOSE_MILLIS) {
            log.info("state materializer stopped in {} ms", millis);
        }
        try (Stream<Path> paths = Files.walk(stateDir)) {
            paths.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            log.warn("cannot remove {}: {}", stateDir, e.toString());
        }
    }
}
