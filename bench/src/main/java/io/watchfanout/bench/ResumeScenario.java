package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import io.watchfanout.testkit.JavaProcess;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * W watchers resuming at once on one fan-out node: from a recent revision (the history window),
 * and from {@code sinceTime} 1 h and 24 h back, which only the events topic holds. The history is
 * synthesized: single-event revisions written straight into the events topic with record
 * timestamps spread over the past at a control-plane write rate, so that Kafka's time index
 * resolves {@code sinceTime}, then a state topic (every key's last value and a checkpoint at the
 * end of the events), so the node rebuilds as from a materializer's checkpoint and fills its
 * small window ({@code --history-max-events}) with the last events. Nothing is written while the
 * watchers catch up: the live revision is the last one written.
 *
 * <p>Per case: time from opening the W streams until the last one has every event up to the live
 * revision, events/s per watcher and in total, the node's Kafka read rate (its
 * {@code watchfanout_older_history_*} counters over the catch-up time) against a plain consumer
 * (a fresh JVM) reading the same span in the same round, node CPU, reads started and encodes per
 * event.
 */
@Command(
        name = "resume",
        mixinStandardHelpOptions = true,
        description = {
            "W watchers resuming at once from the history window, and from sinceTime 1 h and 24 h back "
                    + "(read from the events topic), vs a plain consumer reading the same span.",
            "The history is synthesized at --write-rate events/s with record timestamps in the past; --duration is unused."
        })
final class ResumeScenario implements Callable<Integer> {
    private static final String PREFIX = "resume";
    private static final int KEYS = 1000;
    /** The checkpoint is at revision 1 before the first event; event i (offset i) is revision i + 2. */
    private static final long FIRST_REVISION = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Option(
            names = "--watchers",
            split = ",",
            defaultValue = "100",
            paramLabel = "W,...",
            description = "Watchers resuming at once (default: ${DEFAULT-VALUE}).")
    List<Integer> watchers;

    @Option(
            names = "--write-rate",
            defaultValue = "20",
            paramLabel = "EVENTS_PER_S",
            description =
                    "Control-plane write rate of the synthesized history, events/s: 20 gives 72,000 events per hour "
                            + "and 1.73 M for 24 h; lower it to run in minutes on a small box (default: ${DEFAULT-VALUE}).")
    double writeRate;

    @Option(
            names = "--spans",
            split = ",",
            defaultValue = "1h,24h",
            paramLabel = "DURATION,...",
            converter = io.watchfanout.common.DurationConverter.class,
            description = "How far back the Kafka cases resume (sinceTime = time of the live revision minus this); the "
                    + "topic holds the longest (default: ${DEFAULT-VALUE}).")
    List<Duration> spans;

    /** How the Kafka cases name where they resume. */
    enum From {
        TIME,
        REVISION
    }

    @Option(
            names = "--kafka-from",
            defaultValue = "TIME",
            paramLabel = "TIME|REVISION",
            description = "The Kafka cases resume with sinceTime (TIME, resolved by each request through Kafka's time "
                    + "index) or with the resourceVersion before that time's first revision (REVISION) (default: "
                    + "${DEFAULT-VALUE}).")
    From kafkaFrom;

    @Option(
            names = "--window-events",
            defaultValue = "1000",
            paramLabel = "N",
            description =
                    "The node's --history-max-events, small so that the spans come from Kafka (default: ${DEFAULT-VALUE}).")
    int windowEvents;

    @Option(
            names = "--window-resume-events",
            defaultValue = "500",
            paramLabel = "N",
            description =
                    "The window case resumes this many events before the live revision (default: ${DEFAULT-VALUE}).")
    int windowResume;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(
            names = "--client-threads",
            defaultValue = "1",
            description = "Selector threads of the watch client " + "(default: ${DEFAULT-VALUE}).")
    int clientThreads;

    @Option(names = "--node-heap", defaultValue = "2g", description = "Node -Xmx (default: ${DEFAULT-VALUE}).")
    String nodeHeap;

    @Option(
            names = "--catch-up-timeout",
            defaultValue = "15m",
            paramLabel = "DURATION",
            converter = io.watchfanout.common.DurationConverter.class,
            description = "A case whose watchers have not all caught up by then fails (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    /** The synthesized topic: events {@code 0 .. count-1}, the last one stamped {@code endMillis}. */
    private record History(long count, long endMillis) {
        long liveRevision() {
            return FIRST_REVISION + count - 1;
        }
    }

    /** One resume case: from a revision (the window) or from a time (a span back). */
    private record Case(String name, String query, long fromOffset, long goalFrames, long eventsPerWatcher) {
        boolean kafka() {
            return fromOffset >= 0;
        }
    }

    @Override
    public Integer call() throws Exception {
        check();
        Progress progress = new Progress();
        Figures f = new Figures();
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startKafka();
            String bootstrap = stack.kafka().bootstrapServers();
            History h = produce(bootstrap, progress);
            List<Case> cases = cases(bootstrap, h);
            // The window counts events only: its age bound must not drop the synthesized (old-stamped) events.
            try (BenchStack.Node node = stack.startNode(
                    PREFIX,
                    List.of("--history-max-events", Integer.toString(windowEvents), "--history-max-age", "30d"),
                    List.of(),
                    nodeHeap)) {
                double live = node.metrics().getOrDefault("watchfanout_cache_revision", Double.NaN);
                if (live != h.liveRevision()) {
                    throw new IllegalStateException(
                            "node at revision " + live + " (expected: " + h.liveRevision() + ")");
                }
                progress.log(String.format(
                        "node ready at the live revision %d, window %d events", h.liveRevision(), windowEvents));
                if (!common.warmup.isZero()) {
                    warmUp(node, cases, progress);
                }
                for (int r = 0; r < common.rounds; r++) {
                    for (int w : watchers) {
                        for (Case c : cases) {
                            String row = "W=" + w + " " + c.name;
                            progress.log(row + " round " + (r + 1) + "/" + common.rounds);
                            measure(node, c, w, row, f, progress);
                            if (c.kafka()) {
                                plain(bootstrap, c, row, f, r);
                            }
                        }
                    }
                }
            }
        }
        Report report = new Report("resume", f);
        Report.Chart chart = new Report.Chart("catch-up", "Time to catch up", "events per watcher", "seconds", true);
        for (int w : watchers) {
            for (Case c : cases0) {
                String row = "W=" + w + " " + c.name;
                chart.point("W=" + w, c.eventsPerWatcher, f.median(row, "catch-up s"));
                if (c.kafka()) {
                    report.ratio(String.format(
                            "%s: node reads %.0f records/s from Kafka, %.2f x the plain consumer; "
                                    + "%.1f us node CPU per delivered event; %.0f read(s) started for %d watchers; %.2f encodes/event",
                            row,
                            f.median(row, "node Kafka records/s"),
                            f.median(row, "node/plain"),
                            f.median(row, "node CPU us/delivery"),
                            f.median(row, "reads started"),
                            w,
                            f.median(row, "encodes/event")));
                }
            }
        }
        report.note(String.format(
                "history: %d events at %.2f events/s (%d keys, %d B values), window %d events; the "
                        + "window case resumes %d events back; Kafka cases use sinceTime = live revision's time - span; catch-up s = "
                        + "from opening the streams to the last watcher's last event",
                history.count, writeRate, KEYS, valueBytes, windowEvents, windowResume));
        report.note(
                "node Kafka records/s = watchfanout_older_history_records_read_total delta / catch-up s (the read "
                        + "stops at the window); plain = a fresh consumer JVM reading the whole span to the topic's end, its own time");
        report.chart(chart).write(System.out, common.resultsDir());
        return 0;
    }

    private History history;
    private List<Case> cases0 = List.of();

    private void check() {
        common.check(spec);
        if (watchers.isEmpty() || watchers.stream().anyMatch(w -> w < 1)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--watchers: " + watchers + " (expected: >= 1)");
        }
        if (!(writeRate > 0)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--write-rate: " + writeRate + " (expected: > 0)");
        }
        if (spans.isEmpty() || spans.stream().anyMatch(d -> d.isZero() || d.isNegative())) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--spans: " + spans + " (expected: > 0)");
        }
        if (windowEvents < 1 || windowResume < 1 || windowResume >= windowEvents) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--window-resume-events " + windowResume + " with --window-events " + windowEvents
                            + " (expected: 1 <= resume < window)");
        }
        long shortest = spans.stream()
                .mapToLong(d -> (long) (d.toMillis() / 1000.0 * writeRate))
                .min()
                .orElse(0);
        if (shortest <= 2L * windowEvents) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--spans/--write-rate: the shortest span holds " + shortest
                            + " events, not more than twice the window (" + windowEvents
                            + "): it would not come from Kafka");
        }
        if (clientThreads < 1 || valueBytes < 0) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--client-threads/--value-bytes: " + clientThreads + "/" + valueBytes + " (expected: >= 1 / >= 0)");
        }
    }

    /**
     * Writes the events topic (timestamps from {@code longest span + margin} ago up to now, evenly
     * at the write rate) and the state topic, and returns what was written.
     */
    private History produce(String bootstrap, Progress progress) throws Exception {
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a)) {
            admin.createTopics(List.of(
                            new NewTopic(PREFIX + ".events", Optional.of(1), Optional.empty())
                                    .configs(Map.of(
                                            "retention.ms",
                                            Long.toString(Duration.ofDays(7).toMillis()))),
                            new NewTopic(PREFIX + ".state", Optional.of(1), Optional.empty())
                                    .configs(Map.of("cleanup.policy", "compact"))))
                    .all()
                    .get();
        }
        long longestMillis = spans.stream().mapToLong(Duration::toMillis).max().orElseThrow();
        // A margin of a minute before the longest span, so that its sinceTime falls inside the topic.
        long count = (long) Math.ceil((longestMillis + 60_000) / 1000.0 * writeRate) + 1;
        // Kafka refuses timestamps too far in the future, so the history ends a second ago.
        long end = System.currentTimeMillis() - 1000;
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(512 * 1024));
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(256L << 20));
        ByteString value = BenchEvents.value(valueBytes, 11);
        KeyValue[] last = new KeyValue[KEYS];
        String events = PREFIX + ".events";
        long t0 = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (long i = 0; i < count; i++) {
                long rev = FIRST_REVISION + i;
                int k = (int) (i % KEYS);
                ByteString key = BenchEvents.key(FanoutVsEtcdScenario.PREFIX + "k-" + k);
                KeyValue prev = last[k];
                KeyValue kv = KeyValue.newBuilder()
                        .setKey(key)
                        .setValue(value)
                        .setCreateRevision(prev == null ? rev : prev.getCreateRevision())
                        .setModRevision(rev)
                        .setVersion(prev == null ? 1 : prev.getVersion() + 1)
                        .build();
                last[k] = kv;
                Event e = Event.newBuilder()
                        .setType(Event.Type.PUT)
                        .setKv(kv)
                        .setRevision(rev)
                        .setIndex(0)
                        .setCount(1)
                        .setPrevRevision(rev - 1)
                        .build();
                long ts = end - (long) ((count - 1 - i) * 1000.0 / writeRate);
                producer.send(new ProducerRecord<>(
                        events,
                        0,
                        ts,
                        key.toByteArray(),
                        EventsRecord.newBuilder().setEvent(e).build().toByteArray()));
                if (i % 20_000 == 0) {
                    progress.show(String.format("writing %s: %d of %d events", events, i, count));
                }
            }
            producer.flush();
            String state = PREFIX + ".state";
            for (KeyValue kv : last) {
                if (kv != null) {
                    producer.send(new ProducerRecord<>(
                            state,
                            kv.getKey().toByteArray(),
                            StateRecord.newBuilder().setKv(kv).build().toByteArray()));
                }
            }
            // Without transactions the events are offsets 0 .. count-1: the checkpoint says all are applied.
            producer.send(new ProducerRecord<>(
                    state,
                    new byte[0],
                    StateRecord.newBuilder()
                            .setCheckpoint(StateCheckpoint.newBuilder()
                                    .setRevision(FIRST_REVISION + count - 1)
                                    .setEventsOffset(count))
                            .build()
                            .toByteArray()));
            producer.flush();
        }
        progress.log(String.format(
                "wrote %d events (%s to %s) in %.1f s",
                count,
                Instant.ofEpochMilli(end - (long) ((count - 1) * 1000.0 / writeRate)),
                Instant.ofEpochMilli(end),
                (System.nanoTime() - t0) / 1e9));
        history = new History(count, end);
        return history;
    }

    /** The window case, then one case per span, resolved to offsets as the node will resolve sinceTime. */
    private List<Case> cases(String bootstrap, History h) {
        List<Case> out = new ArrayList<>();
        long from = h.liveRevision() - windowResume;
        out.add(new Case(
                "window (" + windowResume + " events back)",
                "&resourceVersion=" + from,
                -1,
                windowResume,
                windowResume));
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(PREFIX + ".events", 0);
            for (Duration span : spans) {
                long since = h.endMillis - span.toMillis();
                OffsetAndTimestamp o = c.offsetsForTimes(Map.of(tp, since), Duration.ofSeconds(30))
                        .get(tp);
                if (o == null) {
                    throw new IllegalStateException("no record at or after " + Instant.ofEpochMilli(since));
                }
                long events = h.count - o.offset();
                String name = "Kafka " + io.watchfanout.common.DurationConverter.format(span);
                if (kafkaFrom == From.REVISION) {
                    out.add(new Case(
                            name + " (rv)",
                            "&resourceVersion=" + (FIRST_REVISION + o.offset() - 1),
                            o.offset(),
                            events,
                            events));
                } else {
                    // sinceTime's stream starts with a BOOKMARK at the revision before the first event.
                    out.add(new Case(
                            name,
                            "&sinceTime="
                                    + URLEncoder.encode(
                                            Instant.ofEpochMilli(since).toString(), StandardCharsets.UTF_8),
                            o.offset(),
                            events + 1,
                            events));
                }
            }
        }
        cases0 = out;
        return out;
    }

    /** Unmeasured resumes (window, then the shortest span) until the warm-up time is spent, at the largest W. */
    private void warmUp(BenchStack.Node node, List<Case> cases, Progress progress) throws Exception {
        int w = watchers.stream().mapToInt(Integer::intValue).max().orElse(1);
        long end = System.nanoTime() + common.warmup.toNanos();
        int i = 0;
        do {
            Case c = cases.get(i++ % 2);
            progress.log("warm-up: W=" + w + " " + c.name);
            catchUp(node, c, w);
        } while (System.nanoTime() < end);
    }

    private void measure(BenchStack.Node node, Case c, int w, String row, Figures f, Progress progress)
            throws Exception {
        if (c.kafka()) {
            awaitNoReads(node);
        }
        Map<String, Double> m0 = node.metrics();
        Proc.CpuMeter cpu = new Proc.CpuMeter(node.pid()).start();
        double secs = catchUp(node, c, w);
        double cpuSecs = cpu.seconds();
        Map<String, Double> m1 = node.metrics();
        double delivered = (double) w * c.eventsPerWatcher;
        f.add(row, "events/watcher", c.eventsPerWatcher);
        f.add(row, "catch-up s", secs);
        f.add(row, "events/s per watcher", c.eventsPerWatcher / secs);
        f.add(row, "events/s total", delivered / secs);
        double records = delta(m0, m1, "watchfanout_older_history_records_read_total");
        double decoded = delta(m0, m1, "watchfanout_older_history_events_read_total");
        if (c.kafka()) {
            f.add(row, "node records read", records);
            f.add(row, "node Kafka records/s", records / secs);
        }
        f.add(row, "node CPU s", cpuSecs);
        f.add(row, "node CPU us/delivery", 1e6 * cpuSecs / delivered);
        f.add(row, "reads started", delta(m0, m1, "watchfanout_older_history_reads_started_total"));
        f.add(row, "resumes from Kafka", delta(m0, m1, "watchfanout_resumes_from_kafka_total"));
        f.add(
                row,
                "from Kafka %",
                100
                        * (labeled(m1, "watchfanout_catchup_events_total", "source=\"kafka\"")
                                - labeled(m0, "watchfanout_catchup_events_total", "source=\"kafka\""))
                        / delivered);
        f.add(row, "encodes/event", (encodes(m1) - encodes(m0)) / c.eventsPerWatcher);
        progress.log(String.format(
                "%s: %.2f s, %.0f events/s per watcher, %.0f total; read %.0f records (%.0f events "
                        + "decoded), node CPU %.2f s",
                row, secs, c.eventsPerWatcher / secs, delivered / secs, records, decoded, cpuSecs));
    }

    /** Opens W streams of the case and waits until each has every frame up to the live revision; returns seconds. */
    private double catchUp(BenchStack.Node node, Case c, int w) throws Exception {
        String target = "/v1/watch?key=" + FanoutVsEtcdScenario.PREFIX_QUERY + "&prefix=true" + c.query;
        long t0 = System.nanoTime();
        try (WatchLoadClient client = new WatchLoadClient(
                new InetSocketAddress("127.0.0.1", node.port), target, WatchLoadClient.Format.JSON, clientThreads, 0)) {
            client.goal(c.goalFrames);
            client.open(w);
            long deadline = t0 + timeout.toNanos();
            while (client.reachedGoal() < w) {
                if (client.failed() > 0 || client.ended() > 0) {
                    throw new IllegalStateException(c.name + ": " + client.failed() + " streams failed, "
                            + client.ended() + " ended: " + client.lastError());
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            c.name + ": " + client.reachedGoal() + " of " + w + " watchers caught up " + "within "
                                    + timeout + " (frames " + client.frames() + " of " + (long) w * c.goalFrames + ")");
                }
                Thread.sleep(2);
            }
            double secs = (client.lastGoalNanos() - t0) / 1e9;
            // No more frames must come: nothing is written, so a stream with extra frames was miscounted.
            Thread.sleep(300);
            if (client.frames() != (long) w * c.goalFrames) {
                throw new IllegalStateException(
                        c.name + ": " + client.frames() + " frames (expected: " + w + " x " + c.goalFrames + ")");
            }
            return secs;
        }
    }

    /** A finished read lingers for joiners for a while: a Kafka case starts when none is held, so it reads Kafka. */
    private static void awaitNoReads(BenchStack.Node node) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (node.metrics().getOrDefault("watchfanout_older_history_reads", 0.0) > 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("reads of older history still held after 2 minutes");
            }
            Thread.sleep(200);
        }
    }

    /** The plain consumer reading the case's span to the topic's end, in a fresh JVM. */
    private void plain(String bootstrap, Case c, String row, Figures f, int round) throws Exception {
        try (JavaProcess plain = JavaProcess.builder(PlainConsumerMain.class.getName())
                .name("plain-consumer")
                .maxHeap("1g")
                .args(bootstrap, PREFIX + ".events", Long.toString(c.fromOffset))
                .start()) {
            plain.awaitLog("PLAIN-CONSUMER", Duration.ofMinutes(15));
            // The log may be read while the line is half written: parse it once the consumer has exited.
            plain.waitForExit(Duration.ofMinutes(1));
            Pattern line = Pattern.compile("PLAIN-CONSUMER records=(\\d+) seconds=([0-9.]+)");
            Matcher m = null;
            for (String l : Files.readAllLines(plain.logFile())) {
                Matcher x = line.matcher(l);
                if (x.find()) {
                    m = x;
                }
            }
            if (m == null) {
                throw new IllegalStateException("plain consumer printed no result; log " + plain.logFile());
            }
            double records = Double.parseDouble(m.group(1));
            double secs = Double.parseDouble(m.group(2));
            f.add(row, "plain records/s", records / secs);
            f.add(row, "node/plain", f.values(row, "node Kafka records/s").get(round) / (records / secs));
        }
    }

    private static double delta(Map<String, Double> m0, Map<String, Double> m1, String name) {
        return BenchStack.sum(m1, name) - BenchStack.sum(m0, name);
    }

    private static double encodes(Map<String, Double> m) {
        return labeled(
                m,
                "watchfanout_frames_encoded_total",
                "kind=\"event\"",
                "encoding=\"" + WatchLoadClient.Format.JSON.name().toLowerCase(Locale.ROOT) + "\"");
    }

    /** Sum of the samples of {@code name} with every one of {@code labels} (the text format may end labels with a comma). */
    private static double labeled(Map<String, Double> m, String name, String... labels) {
        double s = 0;
        outer:
        for (Map.Entry<String, Double> x : m.entrySet()) {
            if (!x.getKey().startsWith(name + "{")) {
                continue;
            }
            for (String l : labels) {
                if (!x.getKey().contains(l)) {
                    continue outer;
                }
            }
            s += x.getValue();
        }
        return s;
    }
}
