package io.watchfanout.bench;

import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import io.watchfanout.testkit.JavaProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
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
 * the same topic to its end. The state topic is written directly (records as the materializer
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

    @Option(names = "--node-heap", defaultValue = "4g", description = "Node -Xmx (default: ${DEFAULT-VALUE}).")
    String nodeHeap;

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        try (Stack stack = new Stack(BenchMain.repo(), progress)) {
            stack.startKafka();
            String bootstrap = stack.kafka().bootstrapServers();
            for (int keys : keyCounts) {
                String prefix = "rebuild" + keys;
                produce(bootstrap, prefix, keys, progress);
                for (int r = 0; r < common.rounds; r++) {
                    String row = "K=" + keys;
                    progress.log(row + " round " + (r + 1) + "/" + common.rounds + ": fan-out node rebuild");
                    long t0 = System.nanoTime();
                    try (Stack.Node node = stack.startNode(prefix, List.of(), List.of(), nodeHeap)) {
                        double ready = (System.nanoTime() - t0) / 1e9;
                        Map<String, Double> m = node.metrics();
                        double rebuild = m.getOrDefault("watchfanout_rebuild_duration_seconds", Double.NaN);
                        double loaded = m.getOrDefault("watchfanout_rebuild_keys_loaded", Double.NaN);
                        if (loaded < keys) {
                            throw new IllegalStateException("node loaded " + loaded + " keys (expected: " + keys + ")");
                        }
                        f.add(row, "node launch->ready s", ready);
                        f.add(row, "node rebuild s", rebuild);
                        f.add(row, "node keys/s", keys / rebuild);
                        f.add(row, "node RSS MiB", Proc.rssBytes(node.pid()) / 1048576.0);
                    }
                    progress.log(row + " round " + (r + 1) + "/" + common.rounds + ": plain consumer");
                    long p0 = System.nanoTime();
                    try (JavaProcess plain = JavaProcess.builder(PlainConsumerMain.class.getName())
                            .name("plain-consumer")
                            .maxHeap("1g")
                            .args(bootstrap, prefix + ".state")
                            .start()) {
                        String line = plain.awaitLog("PLAIN-CONSUMER", Duration.ofMinutes(15));
                        double launch = (System.nanoTime() - p0) / 1e9;
                        double secs = Double.parseDouble(
                                line.replaceAll(".*seconds=", "").trim());
                        f.add(row, "plain launch->end s", launch);
                        f.add(row, "plain read s", secs);
                        f.add(row, "plain keys/s", keys / secs);
                    }
                    f.add(
                            row,
                            "node/plain speed",
                            f.values(row, "plain read s").get(r)
                                    / f.values(row, "node rebuild s").get(r));
                }
            }
        }
        Report report = new Report("rebuild", f);
        Report.Chart c = new Report.Chart("keys-per-s", "Rebuild speed", "keys in the state topic", "keys/s", true);
        for (int k : keyCounts) {
            String row = "K=" + k;
            c.point("fan-out node", k, f.median(row, "node keys/s"));
            c.point("plain consumer", k, f.median(row, "plain keys/s"));
            double kps = f.median(row, "node keys/s");
            double ratio = f.median(row, "node/plain speed");
            report.ratio(String.format(
                    "K=%d: node %.0f keys/s (target >= 150k: %s), %.2f x plain consumer (target >= 0.7: %s)",
                    k, kps, kps >= 150_000 ? "met" : "missed", ratio, ratio >= 0.7 ? "met" : "missed"));
        }
        report.note("node rebuild s = the node's watchfanout_rebuild_duration_seconds (state topic + events tail); "
                + "plain read s = the consumer's own assign-to-end time; both in fresh JVMs");
        report.chart(c).write(System.out, common.resultsDir());
        return 0;
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
