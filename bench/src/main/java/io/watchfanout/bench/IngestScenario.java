package io.watchfanout.bench;

import io.watchfanout.schema.v1.EventsRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.HdrHistogram.Recorder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The write rate the pipeline carries: etcd written as fast as it acknowledges, (a) alone —
 * etcd's own write rate on this box — then (b) with the ingester, Kafka and a fan-out node
 * running: puts/s etcd still takes, events/s that reach the node (one watcher of the prefix),
 * publish lag (put → record readable, read_committed, in the events topic) and put → frame
 * latency at the node.
 */
@Command(
        name = "ingest",
        mixinStandardHelpOptions = true,
        description = "Max sustained etcd write rate through ingester -> Kafka -> node vs etcd alone; publish lag.")
final class IngestScenario implements Callable<Integer> {
    @Mixin
    CommonOptions common;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(
            names = "--in-flight",
            defaultValue = "256",
            description = "Outstanding puts of the load generator (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(
            names = "--rates",
            split = ",",
            defaultValue = "max,500",
            paramLabel = "PUTS_PER_S|max,...",
            description = "Write rates of phase (b): max finds the carried rate, a fixed rate below it gives the lag "
                    + "without etcd's own queueing (default: ${DEFAULT-VALUE}).")
    List<String> rates;

    @Option(
            names = "--ingester-flag",
            paramLabel = "FLAG",
            description = "A flag of the ingester, repeatable, e.g. --ingester-flag=--compression=zstd.")
    List<String> ingesterFlags = List.of();

    @Option(
            names = "--ingester-jar",
            paramLabel = "JAR",
            description = "The ingester jar to run (default: ingester/target/ingester.jar of this repository), e.g. "
                    + "a copy built from an earlier commit, to compare two builds on the same box.")
    Path ingesterJar;

    @Option(
            names = "--variant",
            paramLabel = "NAME=JAR[,FLAG...]",
            description =
                    "An ingester to compare, repeatable: its rows are NAME at RATE; the variants take turns on one "
                            + "etcd, Kafka and node, one round each in turn (an empty JAR is this repository's), e.g. "
                            + "--variant before=/tmp/ingester-old.jar --variant zstd=,--compression=zstd.")
    List<String> variantSpecs = List.of();

    @Option(
            names = "--pipeline-warmup",
            paramLabel = "DURATION",
            converter = io.watchfanout.common.DurationConverter.class,
            description = "Unmeasured load before the first rate's rounds, after the ingester, Kafka and the node "
                    + "started (default: 4 x --warmup). Their JIT compilers take minutes to settle on a busy "
                    + "2-core box: a steady-state figure needs 5 minutes or more, e.g. --pipeline-warmup 6m.")
    Duration pipelineWarmup;

    private List<Variant> variants = List.of();

    /**
     * The processes whose CPU per event the report gives, in its column order; the materializer
     * only where it runs as a process of its own (an ingester with {@code --no-materializer}).
     */
    private static final List<String> PROCESSES = List.of("etcd", "ingester", "materializer", "kafka", "node");

    /** The processes that are JVMs, whose CPU is also given without their JIT compiler threads. */
    private static final List<String> JVMS = List.of("ingester", "materializer", "kafka", "node");

    /** The ingester flag that moves the materializer into a process of its own, which the bench then runs. */
    private static final String NO_MATERIALIZER = "--no-materializer";

    /** The ingester's counter of Kafka transactions (every outcome). */
    private static final String TRANSACTIONS = "watchfanout_ingester_transactions_total";

    @Override
    public Integer call() throws Exception {
        String loadAverage = loadAverage();
        variants = variantSpecs.stream().map(Variant::parse).toList();
        Progress progress = new Progress();
        Figures f = new Figures();
        String prefix = FanoutVsEtcdScenario.PREFIX;
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startEtcd();
            LoadGenerator load = new LoadGenerator(stack.etcdClient(), prefix, 1000, valueBytes, inFlight);
            Round.warmUp(load, 0, common.warmup, load::acked, progress, "etcd alone");
            for (int r = 0; r < common.rounds; r++) {
                Map<String, Long> pids = new LinkedHashMap<>();
                pids.put("etcd", stack.etcd().pid());
                Round.Result res = Round.run(
                        load,
                        0,
                        common.duration.toNanos(),
                        pids,
                        load::acked,
                        null,
                        progress,
                        "etcd alone round " + (r + 1) + "/" + common.rounds);
                f.add("etcd alone", "puts/s", res.putsPerSecond);
                f.add(
                        "etcd alone",
                        "put p99 ms",
                        load.putLatency().getIntervalHistogram().getValueAtPercentile(99) / 1000.0);
                f.add("etcd alone", "etcd CPU %", 100 * res.cores("etcd"));
                f.add("etcd alone", "etcd CPU us/event", cpuMicrosPerEvent(res, "etcd", res.puts));
            }
            stack.startKafka();
            startIngester(
                    stack,
                    variants.isEmpty() ? ingesterJar : variants.get(0).jar(),
                    variants.isEmpty() ? ingesterFlags : variants.get(0).flags());
            Path eventsLog = stack.kafka().dataDir().resolve(BenchStack.TOPIC_PREFIX + ".events-0");
            BenchStack.Node node = stack.startNode(List.of(), List.of(), "2g");
            Recorder publishLag = new Recorder(TimeUnit.SECONDS.toMicros(60), 3);
            LongAdder published = new LongAdder();
            AtomicBoolean tailing = new AtomicBoolean(true);
            Thread tail = new Thread(
                    () -> tailEvents(stack.kafka().bootstrapServers(), published, publishLag, tailing), "events-tail");
            tail.setDaemon(true);
            tail.start();
            try (WatchTarget t = WatchTarget.http(
                    node.port, FanoutVsEtcdScenario.PREFIX_QUERY, 1, WatchLoadClient.Format.JSON, 1, 1)) {
                WatchTarget.awaitLive(t, stack.etcdClient(), prefix, 1, 60_000);
                Measure m = new Measure(f, stack, node, load, t, published, publishLag, eventsLog, progress);
                if (variants.isEmpty()) {
                    for (String rate : rates) {
                        String row = "pipeline at " + rateLabel(rate);
                        Round.warmUp(load, putRate(rate), pipelineWarmup(rate), t::deliveries, progress, row);
                        for (int r = 0; r < common.rounds; r++) {
                            m.round(row, rate, r);
                        }
                    }
                } else {
                    // Variants take turns on the same etcd, Kafka and node, round by round, so
                    // that a change in the box's load falls on all of them alike.
                    for (int r = 0; r < common.rounds; r++) {
                        for (Variant v : variants) {
                            startIngester(stack, v.jar(), v.flags());
                            for (String rate : rates) {
                                String row = v.name() + " at " + rateLabel(rate);
                                Round.warmUp(load, putRate(rate), pipelineWarmup(rate), t::deliveries, progress, row);
                                m.round(row, rate, r);
                            }
                        }
                    }
                }
            } finally {
                tailing.set(false);
                tail.join(10_000);
            }
        }
        Report report = new Report("ingest", f);
        report.note("materializer: the state materializer as a process of its own (production layout), where the "
                + "ingester runs with " + NO_MATERIALIZER + "; elsewhere it is inside the ingester and in its figures");
        double alone = f.median("etcd alone", "puts/s");
        List<String> names = variants.isEmpty()
                ? List.of("pipeline")
                : variants.stream().map(Variant::name).toList();
        for (String name : names) {
            String max = name + " at max";
            double carried = f.median(max, "node events/s");
            double materializerCpu = f.median(max, "materializer CPU us/event");
            if (!Double.isNaN(materializerCpu)) {
                report.ratio(String.format(
                        "%s: the materializer process %.1f us of CPU per event at max rate (%.1f without JIT)",
                        name, materializerCpu, f.median(max, "materializer us/event w/o JIT")));
            }
            double ingesterCpu = f.median(max, "ingester CPU us/event");
            report.ratio(String.format(
                    "%s carries %.0f events/s to the node = %.2f x etcd's own write rate (%.0f puts/s): target >= 0.35 "
                            + "%s; ingester %.1f us of CPU per event at max rate (%.1f without JIT): target <= 30 %s",
                    name,
                    carried,
                    carried / alone,
                    alone,
                    carried / alone >= 0.35 ? "met" : "missed",
                    ingesterCpu,
                    f.median(max, "ingester us/event w/o JIT"),
                    ingesterCpu <= 30 ? "met" : "missed"));
        }
        report.note("load average (/proc/loadavg) at the start: " + loadAverage + ", at the end: " + loadAverage());
        Report.Chart c = new Report.Chart(
                "rates", "Write rate: etcd alone vs through the pipeline", "round", "per second", false);
        List<Double> a = f.values("etcd alone", "puts/s");
        for (int i = 0; i < a.size(); i++) {
            c.point("etcd alone puts/s", i + 1, a.get(i));
        }
        for (String name : names) {
            List<Double> b = f.values(name + " at max", "node events/s");
            for (int i = 0; i < b.size(); i++) {
                c.point(name + " events/s at the node", i + 1, b.get(i));
            }
        }
        report.note(
                "publish lag: put sent -> record readable (read_committed) in " + BenchStack.TOPIC_PREFIX + ".events");
        report.chart(c).write(System.out, common.resultsDir());
        return 0;
    }

    /** One measured round of the pipeline, its figures added to a row. */
    private final class Measure {
        private final Figures f;
        private final BenchStack stack;
        private final BenchStack.Node node;
        private final LoadGenerator load;
        private final WatchTarget t;
        private final LongAdder published;
        private final Recorder publishLag;
        private final Path eventsLog;
        private final Progress progress;

        Measure(
                Figures f,
                BenchStack stack,
                BenchStack.Node node,
                LoadGenerator load,
                WatchTarget t,
                LongAdder published,
                Recorder publishLag,
                Path eventsLog,
                Progress progress) {
            this.f = f;
            this.stack = stack;
            this.node = node;
            this.load = load;
            this.t = t;
            this.published = published;
            this.publishLag = publishLag;
            this.eventsLog = eventsLog;
            this.progress = progress;
        }

        void round(String row, String rate, int r) throws Exception {
            double putRate = putRate(rate);
            Map<String, Long> pids = new LinkedHashMap<>();
            pids.put("etcd", stack.etcd().pid());
            pids.put("ingester", stack.ingester().pid());
            if (stack.materializer() != null) {
                pids.put("materializer", stack.materializer().pid());
            }
            pids.put("kafka", stack.kafka().pid());
            pids.put("node", node.pid());
            publishLag.getIntervalHistogram();
            long pub0 = published.sum();
            long bytes0 = logBytes(eventsLog);
            double txns0 = BenchStack.sum(stack.ingesterMetrics(), TRANSACTIONS);
            load.putLatency().getIntervalHistogram();
            Map<String, Double> jit0 = jitSeconds(pids);
            Round.Result res = Round.run(
                    load,
                    putRate,
                    common.duration.toNanos(),
                    pids,
                    t::deliveries,
                    t.latency(),
                    progress,
                    row + " round " + (r + 1) + "/" + common.rounds);
            org.HdrHistogram.Histogram lag = publishLag.getIntervalHistogram();
            f.add(row, "puts/s", res.putsPerSecond);
            f.add(row, "put p99 ms", load.putLatency().getIntervalHistogram().getValueAtPercentile(99) / 1000.0);
            f.add(row, "published/s", (published.sum() - pub0) / res.seconds);
            f.add(row, "node events/s", res.deliveriesPerSecond);
            f.add(row, "node got %", 100.0 * res.deliveries / Math.max(1, res.puts));
            f.add(row, "publish lag p50 ms", lag.getValueAtPercentile(50) / 1000.0);
            f.add(row, "publish lag p99 ms", lag.getValueAtPercentile(99) / 1000.0);
            f.add(row, "publish lag p999 ms", lag.getValueAtPercentile(99.9) / 1000.0);
            f.add(row, "put->frame p50 ms", res.percentileMillis(50));
            f.add(row, "put->frame p99 ms", res.percentileMillis(99));
            f.add(row, "etcd CPU %", 100 * res.cores("etcd"));
            f.add(row, "ingester CPU %", 100 * res.cores("ingester"));
            f.add(row, "kafka CPU %", 100 * res.cores("kafka"));
            f.add(row, "node CPU %", 100 * res.cores("node"));
            for (String process : PROCESSES) {
                if (pids.containsKey(process)) {
                    f.add(row, process + " CPU us/event", cpuMicrosPerEvent(res, process, res.deliveries));
                }
            }
            Map<String, Double> jit = jitSeconds(pids);
            for (String process : jit.keySet()) {
                double withoutJit = res.cpuSeconds.get(process) - (jit.get(process) - jit0.get(process));
                f.add(row, process + " us/event w/o JIT", 1e6 * withoutJit / Math.max(1, res.deliveries));
            }
            double txns = BenchStack.sum(stack.ingesterMetrics(), TRANSACTIONS) - txns0;
            f.add(row, "events/transaction", (published.sum() - pub0) / Math.max(1, txns));
            f.add(
                    row,
                    "events log B/event",
                    (logBytes(eventsLog) - bytes0) / (double) Math.max(1, published.sum() - pub0));
        }
    }

    /**
     * (Re)starts the ingester; with {@code --no-materializer} also the materializer as a process of
     * its own, as deployments run it, else none beside it.
     */
    private static void startIngester(BenchStack stack, Path jar, List<String> flags) {
        stack.stopIngester();
        boolean apart = flags.contains(NO_MATERIALIZER);
        if (!apart) {
            stack.stopMaterializer();
        }
        stack.startIngester(jar, flags);
        if (apart && stack.materializer() == null) {
            stack.startMaterializer();
        }
    }

    private static double putRate(String rate) {
        return "max".equals(rate) ? 0 : Double.parseDouble(rate);
    }

    private static String rateLabel(String rate) {
        return "max".equals(rate) ? "max" : rate + " puts/s";
    }

    /**
     * The first configuration also warms up the ingester, Kafka and the node, which started after
     * etcd's rounds (or the ingester of a variant, just started): {@code --pipeline-warmup}, by
     * default four times as long, as the first warm-up of a run.
     */
    private Duration pipelineWarmup(String rate) {
        if (!rate.equals(rates.get(0))) {
            return common.warmup;
        }
        return pipelineWarmup != null ? pipelineWarmup : common.warmup.multipliedBy(4);
    }

    /** An ingester build and flags to compare with others: {@code NAME=JAR[,FLAG...]}. */
    record Variant(String name, Path jar, List<String> flags) {
        static Variant parse(String text) {
            int eq = text.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--variant " + text + " (expected: NAME=JAR[,FLAG...])");
            }
            List<String> parts = List.of(text.substring(eq + 1).split(","));
            Path jar = parts.get(0).isEmpty() ? null : Path.of(parts.get(0));
            return new Variant(text.substring(0, eq), jar, parts.subList(1, parts.size()));
        }
    }

    /**
     * CPU seconds of the JIT compiler threads (C1 and C2) of each JVM so far: on a busy box they
     * still take a large share of a young JVM's CPU after the warm-up, which is compilation, not
     * the cost of an event.
     */
    private static Map<String, Double> jitSeconds(Map<String, Long> pids) {
        Map<String, Double> jit = new LinkedHashMap<>();
        for (String process : JVMS) {
            if (!pids.containsKey(process)) {
                continue;
            }
            long pid = pids.get(process);
            jit.put(
                    process,
                    Proc.threadCpuSeconds(pid, "C1 CompilerThre") + Proc.threadCpuSeconds(pid, "C2 CompilerThre"));
        }
        return jit;
    }

    /** The 1, 5 and 15 minute load averages of the box, as the kernel gives them. */
    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /**
     * Microseconds of CPU (user + system, {@code /proc/<pid>/stat}) a process spent per event of
     * the round: its CPU over the round, settling included, divided by {@code events}.
     */
    private static double cpuMicrosPerEvent(Round.Result res, String process, long events) {
        return 1e6 * res.cpuSeconds.getOrDefault(process, Double.NaN) / Math.max(1, events);
    }

    /** Bytes of the partition's log segments (not its preallocated indexes); 0 when unreadable. */
    private static long logBytes(Path partitionDir) {
        try (Stream<Path> files = Files.list(partitionDir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".log"))
                    .mapToLong(f -> f.toFile().length())
                    .sum();
        } catch (IOException e) {
            return 0;
        }
    }

    private static void tailEvents(String bootstrap, LongAdder published, Recorder lag, AtomicBoolean running) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(BenchStack.TOPIC_PREFIX + ".events", 0);
            c.assign(List.of(tp));
            c.seekToEnd(List.of(tp));
            while (running.get()) {
                for (ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) {
                    long now = System.nanoTime();
                    try {
                        EventsRecord e = EventsRecord.parseFrom(rec.value());
                        if (e.hasEvent()) {
                            published.increment();
                            long stamp =
                                    LatencyStamp.fromBytes(e.getEvent().getKv().getValue());
                            long micros = (now - stamp) / 1000;
                            if (stamp > 0 && micros >= 0 && micros < TimeUnit.SECONDS.toMicros(60)) {
                                lag.recordValue(micros);
                            }
                        }
                    } catch (com.google.protobuf.InvalidProtocolBufferException ex) {
                        // not ours
                    }
                }
            }
        }
    }
}
