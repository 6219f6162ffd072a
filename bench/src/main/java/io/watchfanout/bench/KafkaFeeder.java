package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Feeds a fan-out node straight from Kafka, without etcd and the ingester, so that the node
 * (not etcd's write rate) is what limits: creates {@code <prefix>.events} and
 * {@code <prefix>.state} with a checkpoint at revision 1, then produces single-event revisions
 * 2, 3, … with an unbroken {@code prev_revision} chain, each value stamped like the load
 * generator's ({@link LatencyStamp}).
 *
 * <p>Thread-safety: {@link #run} on one thread.
 */
final class KafkaFeeder implements Load, AutoCloseable {
    /** What the feeder writes at each revision. Called on the feeding thread only. */
    interface Objects {
        /** The key written at {@code revision}. */
        ByteString key(long revision);

        /** The value of {@code key} written at {@code revision}. */
        ByteString value(long revision, ByteString key);
    }

    private final KafkaProducer<byte[], byte[]> producer;
    private final String eventsTopic;
    private final Objects objects;
    private final Map<ByteString, KeyValue> previous;
    private final LongAdder acked = new LongAdder();
    private long revision = 1;

    /**
     * Creates {@code <prefix>.events} and the compacted {@code <prefix>.state}, one partition each,
     * as the ingester would: the topics a node fed straight from Kafka reads.
     */
    static void createTopics(String bootstrap, String prefix) throws Exception {
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a)) {
            admin.createTopics(List.of(
                            new NewTopic(prefix + ".events", Optional.of(1), Optional.empty()),
                            new NewTopic(prefix + ".state", Optional.of(1), Optional.empty())
                                    .configs(Map.of("cleanup.policy", "compact"))))
                    .all()
                    .get();
        }
    }

    /** Feeds latency-stamped values of {@code valueBytes} to 1,000 keys under the benchmark prefix. */
    KafkaFeeder(String bootstrap, String prefix, int valueBytes) throws Exception {
        this(
                bootstrap,
                prefix,
                stamped(BenchEvents.value(Math.max(8, valueBytes), 5).toByteArray()),
                false);
    }

    /**
     * Feeds what {@code objects} gives; with {@code prevKv}, each event carries the key's previous
     * key-value (as the ingester publishes them) and its version counts the key's writes.
     */
    KafkaFeeder(String bootstrap, String prefix, Objects objects, boolean prevKv) throws Exception {
        this.objects = objects;
        this.previous = prevKv ? new HashMap<>() : null;
        createTopics(bootstrap, prefix);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "1");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        producer = new KafkaProducer<>(p);
        eventsTopic = prefix + ".events";
        producer.send(new ProducerRecord<>(
                        prefix + ".state",
                        new byte[0],
                        StateRecord.newBuilder()
                                .setCheckpoint(StateCheckpoint.newBuilder()
                                        .setRevision(1)
                                        .setEventsOffset(0))
                                .build()
                                .toByteArray()))
                .get();
    }

    private static Objects stamped(byte[] filler) {
        return new Objects() {
            @Override
            public ByteString key(long revision) {
                return BenchEvents.key(FanoutVsEtcdScenario.PREFIX + "k-" + (revision % 1000));
            }

            @Override
            public ByteString value(long revision, ByteString key) {
                return LatencyStamp.value(System.nanoTime(), filler);
            }
        };
    }

    /** The last revision written (1 before the first). */
    long revision() {
        return revision;
    }

    @Override
    public void run(double rate, long durationNanos) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + durationNanos;
        long i = 0;
        while (System.nanoTime() < end) {
            if (rate > 0) {
                long due = start + (long) (i * 1e9 / rate);
                long now = System.nanoTime();
                if (due > now) {
                    TimeUnit.NANOSECONDS.sleep(Math.min(due - now, end - now));
                    continue;
                }
            }
            long rev = ++revision;
            ByteString key = objects.key(rev);
            KeyValue prev = previous == null ? null : previous.get(key);
            KeyValue kv = KeyValue.newBuilder()
                    .setKey(key)
                    .setValue(objects.value(rev, key))
                    .setCreateRevision(previous == null ? 2 : prev == null ? rev : prev.getCreateRevision())
                    .setModRevision(rev)
                    .setVersion(previous == null ? rev : prev == null ? 1 : prev.getVersion() + 1)
                    .build();
            if (previous != null) {
                previous.put(key, kv);
            }
            Event e = BenchEvents.put(kv, prev, rev);
            producer.send(
                    new ProducerRecord<>(
                            eventsTopic,
                            key.toByteArray(),
                            EventsRecord.newBuilder().setEvent(e).build().toByteArray()),
                    (md, ex) -> {
                        if (ex == null) {
                            acked.increment();
                        }
                    });
            i++;
        }
        producer.flush();
    }

    /**
     * Writes at least {@code count} revisions, as fast as Kafka takes them: the rate loop,
     * unthrottled, until that many were acknowledged (or a round wrote nothing).
     */
    void writeAll(int count) throws InterruptedException {
        long until = acked() + count;
        while (acked() < until) {
            long before = revision;
            run(0, 200_000_000L);
            drain(5000);
            if (revision == before) {
                break;
            }
        }
    }

    @Override
    public void drain(long millis) {
        producer.flush();
    }

    @Override
    public long acked() {
        return acked.sum();
    }

    @Override
    public void close() {
        producer.close();
    }
}
