package io.watchfanout.bench;

import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import io.watchfanout.testkit.JavaProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A fan-out node's rebuild from a state topic of K keys (1 KiB values): time from launch to
 * ready, the node's own rebuild time, keys/s, against a plain consumer (a fresh JVM too) reading
 * the same topic to its end, and the CPU per key of the node, the plain consumer and Kafka;
 * several node heaps side by side in each round. The state topic is written directly (records as the materializer
 * writes them, then a checkpoint at revision K+1 with an empty events topic), so only Kafka runs.
 */
@Command(
        name = "rebuild",
        mixinStandardHelpOptions = true,
        description = "Node rebuild from a state topic of K keys vs a plain consumer reading it to its end.")
final class RebuildScenario implements Callable<Integer> {
    @Mixin
    CommonOptions common;

    @Option(
            names = "--keys",
            split = ",",
            defaultValue = "100000",
            paramLabel = "K,...",
            description = "State topic sizes, keys (default: ${DEFAULT-VALUE}; the large size to try is 1000000).")
    List<Integer> keyCounts;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(
            names = "--node-heap",
            split = ",",
            defaultValue = "4g",
            paramLabel = "HEAP,...",
            description = "Node -Xmx, one row each, side by side in every round (default: ${DEFAULT-VALUE}; "
                    + "e.g. 4g,1600m).")
    List<String> nodeHeaps;

    @Option(
            names = "--baseline-jar",
            paramLabel = "JAR",
            description = "A fan-out node jar of other code (e.g. before a change): its rows beside this checkout's, "
                    + "at every heap, in every round.")
    Path baselineJar;

    @Option(
            names = "--node-java-opts",
            paramLabel = "OPTS",
            description = "JVM options of one more node of this checkout at every heap, in every round, e.g. "
                    + "\"-XX:MaxTenuringThreshold=1\" (spaces separate options).")
    String nodeJavaOpts;

    private static final Pattern PLAIN_LINE =
            Pattern.compile("PLAIN-CONSUMER records=(\\d+) seconds=([0-9.]+) cpu=([0-9.]+)");

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startKafka();
            String bootstrap = stack.kafka().bootstrapServers();
            long kafkaPid = Proc.descendant("kafka.Kafka");
            for (int keys : keyCounts) {
                String prefix = "rebuild" + keys;
                produce(bootstrap, prefix, keys, progress);
                for (int r = 0; r < common.rounds; r++) {
                    String round = " round " + (r + 1) + "/" + common.rounds;
                    Proc.CpuMeter kafkaCpu = new Proc.CpuMeter(kafkaPid);
                    String plainRow = "K=" + keys + " plain";
                    progress.log(plainRow + round + ": plain consumer");
                    kafkaCpu.start();
                    double plainRead = plain(bootstrap, prefix, keys, plainRow, f);
                    f.add(plainRow, "Kafka CPU us/key", kafkaCpu.seconds() / keys * 1e6);
                    for (String heap : nodeHeaps) {
                        for (Variant v : variants()) {
                            String row = v.row(keys, heap);
                            progress.log(row + round + ": fan-out node rebuild");
                            kafkaCpu.start();
                            long t0 = System.nanoTime();
                            try (BenchStack.Node node = v.jar() == null
                                    ? stack.startNode(prefix, List.of(), v.jvmArgs(), heap)
                                    : stack.startNode(v.jar(), prefix, List.of(), v.jvmArgs(), heap)) {
                                double ready = (System.nanoTime() - t0) / 1e9;
                                double cpu = Proc.cpuSeconds(node.pid());
                                double kafka = kafkaCpu.seconds();
                                Map<String, Double> m = node.metrics();
                                double rebuild = m.getOrDefault("watchfanout_rebuild_duration_seconds", Double.NaN);
                                double loaded = m.getOrDefault("watchfanout_rebuild_keys_loaded", Double.NaN);
                                if (loaded < keys) {
                                    throw new IllegalStateException(
                                            "node loaded " + loaded + " keys (expected: " + keys + ")");
                                }
                                f.add(row, "launch->ready s", ready);
                                f.add(row, "read s", rebuild);
                                f.add(row, "keys/s", keys / rebuild);
                                f.add(row, "CPU us/key", cpu / keys * 1e6);
                                f.add(row, "Kafka CPU us/key", kafka / keys * 1e6);
                                f.add(row, "RSS MiB", Proc.rssBytes(node.pid()) / 1048576.0);
                                f.add(row, "node/plain speed", plainRead / rebuild);
                            }
                        }
                    }
                }
            }
        }
        Report report = new Report("rebuild", f);
        Report.Chart c = new Report.Chart("keys-per-s", "Rebuild speed", "keys in the state topic", "keys/s", true);
        for (int k : keyCounts) {
            c.point("plain consumer", k, f.median("K=" + k + " plain", "keys/s"));
            for (String heap : nodeHeaps) {
                for (Variant v : variants()) {
                    String row = v.row(k, heap);
                    c.point(row.substring(row.indexOf(' ') + 1), k, f.median(row, "keys/s"));
                    double kps = f.median(row, "keys/s");
                    double ratio = f.median(row, "node/plain speed");
                    report.ratio(String.format(
                            "K=%d, -Xmx%s: node %.0f keys/s, %.2f x plain consumer (targets: >= 0.7 x at the default heap, "
                                    + ">= 0.5 x at 1.5 x the data)",
                            k, heap + v.label(), kps, ratio));
                }
            }
        }
        report.note("read s = the node's watchfanout_rebuild_duration_seconds (state topic + events tail), or the "
                + "plain consumer's own assign-to-end time; both in fresh JVMs. CPU us/key = the process's utime + "
                + "stime from launch to ready (node) or to the end of the read (plain consumer), JVM start-up "
                + "included; Kafka CPU us/key = the broker's over the same span");
        report.chart(c).write(System.out, common.resultsDir());
        return 0;
    }

    /** One kind of node of a round: a jar (null: this checkout's) and JVM options, named by its label. */
    private record Variant(String label, Path jar, List<String> jvmArgs) {
        String row(int keys, String heap) {
            return "K=" + keys + " node -Xmx" + heap + label;
        }
    }

    /** This checkout's node, then the baseline jar's and this checkout's with the extra JVM options, if given. */
    private List<Variant> variants() {
        List<Variant> variants = new ArrayList<>();
        variants.add(new Variant("", null, List.of()));
        if (baselineJar != null) {
            variants.add(new Variant(" baseline", baselineJar.toAbsolutePath(), List.of()));
        }
        if (nodeJavaOpts != null && !nodeJavaOpts.isBlank()) {
            variants.add(new Variant(
                    " " + nodeJavaOpts.trim(), null, List.of(nodeJavaOpts.trim().split("\\s+"))));
        }
        return variants;
    }

    /** One plain consumer read of the state topic: its figures into {@code row}; returns its read seconds. */
    private static double plain(String bootstrap, String prefix, int keys, String row, Figures f) throws Exception {
        long p0 = System.nanoTime();
        try (JavaProcess plain = JavaProcess.builder(PlainConsumerMain.class.getName())
                .name("plain-consumer")
                .maxHeap("1g")
                .args(bootstrap, prefix + ".state")
                .start()) {
            plain.awaitLog("PLAIN-CONSUMER", Duration.ofMinutes(15));
            double launch = (System.nanoTime() - p0) / 1e9;
            // The log may be read while the line is half written: parse it once the consumer has exited.
            plain.waitForExit(Duration.ofMinutes(1));
            Matcher m = null;
            for (String l : Files.readAllLines(plain.logFile())) {
                Matcher x = PLAIN_LINE.matcher(l);
                if (x.find()) {
                    m = x;
                }
            }
            if (m == null) {
                throw new IllegalStateException("no PLAIN-CONSUMER line in " + plain.logFile());
            }
            double secs = Double.parseDouble(m.group(2));
            f.add(row, "launch->ready s", launch);
            f.add(row, "read s", secs);
            f.add(row, "keys/s", keys / secs);
            f.add(row, "CPU us/key", Double.parseDouble(m.group(3)) / keys * 1e6);
            return secs;
        }
    }

    private void produce(String bootstrap, String prefix, int keys, Progress progress) throws Exception {
        KafkaFeeder.createTopics(bootstrap, prefix);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(512 * 1024));
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(256L << 20));
        byte[] filler = BenchEvents.value(valueBytes, 9).toByteArray();
        long t0 = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < keys; i++) {
                com.google.protobuf.ByteString key = BenchEvents.key(String.format("/rebuild/k-%09d", i));
                KeyValue kv = KeyValue.newBuilder()
                        .setKey(key)
                        .setValue(com.google.protobuf.ByteString.copyFrom(filler))
                        .setCreateRevision(i + 1)
                        .setModRevision(i + 1)
                        .setVersion(1)
                        .build();
                producer.send(new ProducerRecord<>(
                        prefix + ".state",
                        key.toByteArray(),
                        StateRecord.newBuilder().setKv(kv).build().toByteArray()));
                if (i % 10000 == 0) {
                    progress.show(String.format("writing the state topic %s.state: %d of %d keys", prefix, i, keys));
                }
            }
            producer.send(new ProducerRecord<>(
                    prefix + ".state",
                    new byte[0],
                    StateRecord.newBuilder()
                            .setCheckpoint(StateCheckpoint.newBuilder()
                                    .setRevision(keys + 1L)
                                    .setEventsOffset(0))
                            .build()
                            .toByteArray()));
            producer.flush();
        }
        progress.log(
                String.format("wrote %d keys to %s.state in %.1f s", keys, prefix, (System.nanoTime() - t0) / 1e9));
    }
}
