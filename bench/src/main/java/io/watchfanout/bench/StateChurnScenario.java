package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.ingester.topics.StateCompaction;
import io.watchfanout.ingester.topics.TopicManager;
import io.watchfanout.ingester.topics.TopicSettings;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A fan-out node's restart on a state topic whose few keys are updated very often (a cluster's
 * lease heartbeats: 171 keys, thousands of updates a minute): launch to ready right after the
 * topics were made, which is what a state topic looks like right after its segment rolled and
 * was compacted, and again after minutes of updates. Two state topics side by side in one run:
 * one with the settings older ingesters gave it ({@code segment.ms} 1 h, Kafka's dirty ratio
 * 0.5), one made the same way and then given today's by the ingester's {@link TopicManager}
 * ({@link StateCompaction}), as an ingester does at start. Both are written as the materializer
 * writes them (a transaction a second: that second's key-values, then a checkpoint at its last
 * revision) beside an empty events topic, so only Kafka runs; the broker runs Kafka's default
 * {@code log.cleaner.backoff.ms} (15 s) rather than the testkit's 1 s.
 */
@Command(
        name = "state-churn",
        mixinStandardHelpOptions = true,
        description = "Node restart after a segment roll and after minutes of updates to few keys: "
                + "the state topic's old settings vs today's.")
final class StateChurnScenario implements Callable<Integer> {
    @Mixin
    CommonOptions common;

    @Option(names = "--keys", defaultValue = "171", description = "Keys updated (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(
            names = "--updates-per-second",
            defaultValue = "300",
            description =
                    "Updates a second to each state topic, round robin over the keys (default: ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(
            names = "--churn-minutes",
            defaultValue = "16",
            description = "Minutes of updates before the last restarts (default: ${DEFAULT-VALUE}).")
    int churnMinutes;

    @Option(
            names = "--sample-minutes",
            defaultValue = "4",
            description = "One restart on each topic every this many minutes in between (default: ${DEFAULT-VALUE}).")
    int sampleMinutes;

    @Option(names = "--node-heap", defaultValue = "1g", description = "Node -Xmx (default: ${DEFAULT-VALUE}).")
    String nodeHeap;

    /** One state topic of the run: its topic prefix and how its row is named. */
    private record Arm(String label, String prefix) {}

    private static final Arm OLD = new Arm("old settings (segment.ms 1 h, ratio 0.5)", "churn-old");
    private static final Arm NEW = new Arm(
            "new settings (segment.ms " + StateCompaction.SEGMENT.toSeconds() + " s, ratio "
                    + StateCompaction.DIRTY_RATIO + ")",
            "churn-new");

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        List<Arm> arms = List.of(OLD, NEW);
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startKafka(Map.of("log.cleaner.backoff.ms", "15000"));
            String bootstrap = stack.kafka().bootstrapServers();
            for (Arm arm : arms) {
                createAsOlderIngesters(bootstrap, arm.prefix());
            }
            new TopicManager(bootstrap, KafkaClientSettings.NONE).ensure(settings(NEW.prefix()));
            try (Churn churn = new Churn(bootstrap, arms)) {
                long t0 = System.nanoTime();
                churn.awaitFirstSecond();
                measure(stack, arms, "fresh", common.rounds, f, progress);
                for (int m = sampleMinutes; m <= churnMinutes; m += sampleMinutes) {
                    long due = t0 + TimeUnit.MINUTES.toNanos(m);
                    while (System.nanoTime() < due) {
                        churn.check();
                        progress.show(String.format(
                                "updating %d keys, %d a second: %d records in each state topic; next restarts at "
                                        + "minute %d",
                                keys, rate, churn.written(), m));
                        Thread.sleep(1000);
                    }
                    churn.check();
                    measure(stack, arms, m + " min", m + sampleMinutes > churnMinutes ? common.rounds : 1, f, progress);
                }
                progress.log(String.format("wrote %d records to each state topic", churn.written()));
            }
        }
        Report report = new Report("state-churn", f);
        String last = lastPhase();
        for (Arm arm : arms) {
            double fresh = f.median(arm.label() + ", fresh", "launch->ready s");
            double after = f.median(arm.label() + ", " + last, "launch->ready s");
            report.ratio(String.format(
                    "%s: launch->ready after %s of updates %.2f s = %.2f x fresh %.2f s (goal: <= 1.2 x); records read "
                            + "%.0f vs %.0f",
                    arm.label(),
                    last,
                    after,
                    after / fresh,
                    fresh,
                    f.median(arm.label() + ", " + last, "state records"),
                    f.median(arm.label() + ", fresh", "state records")));
        }
        report.note("fresh = restarts within the first minute or two (the state topic's keys and under two minutes "
                + "of updates: a segment just rolled and compacted); N min = after N minutes of " + rate
                + " updates a second to " + keys + " keys of " + valueBytes + " B. launch->ready = JVM launch to "
                + "/readyz 200; read s = the node's watchfanout_rebuild_duration_seconds; state records = what a "
                + "read_committed read of the state topic to its end returns (what the node reads), counted just "
                + "before the phase's restarts; state MiB = the partition's size on the broker");
        report.write(System.out, common.resultsDir());
        return 0;
    }

    private String lastPhase() {
        int m = sampleMinutes;
        while (m + sampleMinutes <= churnMinutes) {
            m += sampleMinutes;
        }
        return m + " min";
    }

    private static TopicSettings settings(String prefix) {
        return new TopicSettings(prefix + ".events", prefix + ".state", Duration.ofDays(1), 8 << 20, 1, (short) -1, -1);
    }

    /** The topics as an ingester before the eager compaction settings made them. */
    private static void createAsOlderIngesters(String bootstrap, String prefix) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(
                            new NewTopic(prefix + ".events", Optional.of(1), Optional.empty())
                                    .configs(Map.of("cleanup.policy", "delete", "retention.ms", "86400000")),
                            new NewTopic(prefix + ".state", Optional.of(1), Optional.empty())
                                    .configs(Map.of(
                                            "cleanup.policy", "compact",
                                            "segment.ms", "3600000",
                                            "delete.retention.ms", "86400000"))))
                    .all()
                    .get();
        }
    }

    /** {@code restarts} node restarts on each topic, taking turns, under the row "label, phase". */
    private void measure(BenchStack stack, List<Arm> arms, String phase, int restarts, Figures f, Progress progress)
            throws Exception {
        String bootstrap = stack.kafka().bootstrapServers();
        for (Arm arm : arms) {
            String row = arm.label() + ", " + phase;
            f.add(row, "state records", count(bootstrap, arm.prefix() + ".state"));
            f.add(row, "state MiB", sizeBytes(bootstrap, arm.prefix() + ".state") / 1048576.0);
        }
        for (int r = 0; r < restarts; r++) {
            for (Arm arm : arms) {
                String row = arm.label() + ", " + phase;
                progress.log(row + ": fan-out node restart " + (r + 1) + "/" + restarts);
                long t0 = System.nanoTime();
                try (BenchStack.Node node = stack.startNode(arm.prefix(), List.of(), List.of(), nodeHeap)) {
                    double ready = (System.nanoTime() - t0) / 1e9;
                    Map<String, Double> m = node.metrics();
                    double loaded = m.getOrDefault("watchfanout_rebuild_keys_loaded", Double.NaN);
                    if (!(loaded >= keys)) {
                        throw new IllegalStateException("node loaded " + loaded + " keys (expected: " + keys + ")");
                    }
                    f.add(row, "launch->ready s", ready);
                    f.add(row, "read s", m.getOrDefault("watchfanout_rebuild_duration_seconds", Double.NaN));
                }
            }
        }
    }

    /** Records a read_committed read of partition 0 from its start to its end returns. */
    private static long count(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            long n = 0;
            while (c.position(tp) < end) {
                for (var r : c.poll(Duration.ofMillis(500))) {
                    if (r.offset() < end) {
                        n++;
                    }
                }
            }
            return n;
        }
    }

    private static long sizeBytes(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            int broker = admin.describeCluster().nodes().get().iterator().next().id();
            long size = 0;
            for (LogDirDescription d : admin.describeLogDirs(List.of(broker))
                    .allDescriptions()
                    .get()
                    .get(broker)
                    .values()) {
                ReplicaInfo info = d.replicaInfos().get(new TopicPartition(topic, 0));
                if (info != null) {
                    size += info.size();
                }
            }
            return size;
        }
    }

    /**
     * Writes every state topic as the materializer does, once a second: that second's updates in
     * one transaction, round robin over the keys, then a checkpoint at the last revision written.
     * One thread; its first failure is thrown by {@link #check()}.
     */
    private final class Churn implements AutoCloseable {
        private final List<Arm> arms;
        private final List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        private final ByteString value = BenchEvents.value(valueBytes, 7);
        private final long[] createRevision = new long[keys];
        private final long[] version = new long[keys];
        private final AtomicLong written = new AtomicLong();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private long revision;

        Churn(String bootstrap, List<Arm> arms) {
            this.arms = arms;
            for (Arm arm : arms) {
                Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "state-churn-" + arm.prefix());
                p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
                producer.initTransactions();
                producers.add(producer);
            }
            timer.scheduleAtFixedRate(this::second, 0, 1, TimeUnit.SECONDS);
        }

        /** One second of updates, the same to every topic. */
        private void second() {
            if (failure.get() != null) {
                return;
            }
            try {
                int n = written.get() == 0 ? Math.max(rate, keys) : rate;
                List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(n + 1);
                for (int i = 0; i < n; i++) {
                    revision++;
                    int k = (int) ((revision - 1) % keys);
                    if (createRevision[k] == 0) {
                        createRevision[k] = revision;
                    }
                    version[k]++;
                    ByteString key = BenchEvents.key(String.format("/registry/leases/kube-node-lease/node-%04d", k));
                    KeyValue kv = KeyValue.newBuilder()
                            .setKey(key)
                            .setValue(value)
                            .setCreateRevision(createRevision[k])
                            .setModRevision(revision)
                            .setVersion(version[k])
                            .build();
                    batch.add(new ProducerRecord<>(
                            "",
                            key.toByteArray(),
                            StateRecord.newBuilder().setKv(kv).build().toByteArray()));
                }
                batch.add(new ProducerRecord<>(
                        "",
                        new byte[0],
                        StateRecord.newBuilder()
                                .setCheckpoint(StateCheckpoint.newBuilder()
                                        .setRevision(revision)
                                        .setEventsOffset(0))
                                .build()
                                .toByteArray()));
                for (int a = 0; a < arms.size(); a++) {
                    KafkaProducer<byte[], byte[]> producer = producers.get(a);
                    String topic = arms.get(a).prefix() + ".state";
                    producer.beginTransaction();
                    for (ProducerRecord<byte[], byte[]> r : batch) {
                        producer.send(new ProducerRecord<>(topic, r.key(), r.value()));
                    }
                    producer.commitTransaction();
                }
                written.addAndGet(n);
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }

        long written() {
            return written.get();
        }

        void check() {
            Throwable t = failure.get();
            if (t != null) {
                throw new IllegalStateException("writing the state topics failed: " + t, t);
            }
        }

        void awaitFirstSecond() throws InterruptedException {
            while (written.get() == 0) {
                check();
                Thread.sleep(100);
            }
        }

        @Override
        public void close() {
            timer.shutdownNow();
            try {
                timer.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            producers.forEach(KafkaProducer::close);
        }
    }
}
