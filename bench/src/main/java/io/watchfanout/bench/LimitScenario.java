package io.watchfanout.bench;

import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The fan-out node at full load (etcd written as fast as it acknowledges) against the physical
 * ceiling: a minimal NIO writer of pre-encoded frames to the same W connections and the same
 * client ({@link LimitWriter}). Reports the node's deliveries/s as a fraction of the ceiling's.
 * With {@code --baseline-jar}, a second node of other code serves the same feed and is measured after
 * this checkout's at every W (each idles, still consuming the feed, while the other is measured).
 */
@Command(
        name = "limit",
        mixinStandardHelpOptions = true,
        description = "Fan-out node fed as fast as the ceiling delivers vs a minimal NIO writer of pre-encoded frames "
                + "(the physical ceiling).")
final class LimitScenario implements Callable<Integer> {
    @Mixin
    CommonOptions common;

    @Option(
            names = "--watchers",
            split = ",",
            defaultValue = "100,1000",
            paramLabel = "W,...",
            description = "Watcher counts (default: ${DEFAULT-VALUE}).")
    List<Integer> watchers;

    @Option(
            names = "--frames-per-write",
            defaultValue = "16",
            description = "Frames the limit writer gathers into one write (default: ${DEFAULT-VALUE}).")
    int framesPerWrite;

    @Option(
            names = "--writer-threads",
            defaultValue = "2",
            description =
                    "Selector threads of the limit writer; the node has one IO thread per core (default: ${DEFAULT-VALUE}).")
    int writerThreads;

    @Option(
            names = "--source",
            defaultValue = "kafka",
            paramLabel = "kafka|etcd",
            description =
                    "What feeds the node: kafka (events produced straight into its topic at the ceiling's rate / W, "
                            + "so the node is the bottleneck) or etcd (etcd -> ingester at etcd's max write rate) (default: ${DEFAULT-VALUE}).")
    String source;

    @Option(
            names = "--feed-rate",
            defaultValue = "0",
            paramLabel = "EVENTS_PER_S",
            description =
                    "With --source kafka: events/s to feed; 0 = the ceiling's deliveries/s divided by W (default: ${DEFAULT-VALUE}).")
    double feedRate;

    @Option(
            names = "--client-threads",
            defaultValue = "1",
            description = "Selector threads of the HTTP watch client (default: ${DEFAULT-VALUE}).")
    int clientThreads;

    @Option(
            names = "--baseline-jar",
            paramLabel = "JAR",
            description = "A fan-out node jar of other code (e.g. before a change): a second node on the same feed, "
                    + "measured at every W after this checkout's; ratios this / baseline.")
    Path baselineJar;

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        KeyValue kv = BenchEvents.kv(BenchEvents.key("/bench/k-42"), BenchEvents.value(1024, 3), 100);
        ByteBuffer frameBuf = new FrameEncoder()
                .event(new CachedEvent(BenchEvents.put(kv, null, 100), 0), WatchEventEncodings.JSON, FrameKind.EVENT);
        byte[] frame = new byte[frameBuf.remaining()];
        frameBuf.duplicate().get(frame);
        List<NodeVariant> nodes;
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            Load load;
            String topics;
            if (source.equals("etcd")) {
                stack.startEtcd().startKafka().startIngester();
                topics = BenchStack.TOPIC_PREFIX;
                load = new LoadGenerator(stack.etcdClient(), FanoutVsEtcdScenario.PREFIX, 1000, 1024, 512);
            } else {
                stack.startKafka();
                KafkaFeeder feeder = new KafkaFeeder(stack.kafka().bootstrapServers(), "limit", 1024);
                stack.closeLater(feeder);
                topics = "limit";
                load = feeder;
            }
            nodes = NodeVariant.start(stack, baselineJar, topics, "2g");
            for (int w : watchers) {
                String limitRow = "limit writer W=" + w;
                progress.log("attaching " + w + " watchers to the limit writer");
                try (LimitWriter writer = new LimitWriter(frame, framesPerWrite, writerThreads);
                        WatchTarget t = WatchTarget.http(
                                writer.port(), "/", w, WatchLoadClient.Format.JSON, clientThreads, 0)) {
                    Thread.sleep(1000 + common.warmup.toMillis());
                    for (int r = 0; r < common.rounds; r++) {
                        long pid = Proc.self();
                        double cpu0 = Proc.cpuSeconds(pid);
                        long d0 = t.deliveries();
                        long start = System.nanoTime();
                        while (System.nanoTime() - start < common.duration.toNanos()) {
                            Thread.sleep(1000);
                            progress.show(String.format(
                                    "%s round %d/%d: %.0f deliveries/s",
                                    limitRow,
                                    r + 1,
                                    common.rounds,
                                    (t.deliveries() - d0) / ((System.nanoTime() - start) / 1e9)));
                        }
                        double secs = (System.nanoTime() - start) / 1e9;
                        long d = t.deliveries() - d0;
                        f.add(limitRow, "deliveries/s", d / secs);
                        f.add(limitRow, "writer+client CPU %", 100 * (Proc.cpuSeconds(pid) - cpu0) / secs);
                    }
                }
                // Offer the node as many deliveries per second as the ceiling managed (or what --feed-rate asks).
                double rate =
                        source.equals("etcd") ? 0 : feedRate > 0 ? feedRate : f.median(limitRow, "deliveries/s") / w;
                for (NodeVariant v : nodes) {
                    nodeRounds(stack, v, load, rate, w, f, progress);
                }
            }
        }
        Report report = new Report("limit", f);
        Report.Chart c = new Report.Chart(
                "deliveries", "Fan-out node vs the physical ceiling", "watchers", "deliveries/s", true);
        for (int w : watchers) {
            double limit = f.median("limit writer W=" + w, "deliveries/s");
            c.point("limit writer (" + framesPerWrite + " frames/write)", w, limit);
            for (NodeVariant v : nodes) {
                double node = f.median("fan-out node W=" + w + v.label(), "deliveries/s");
                c.point("fan-out node" + v.label(), w, node);
                report.ratio(String.format(
                        "W=%d%s: node %.0f / ceiling %.0f deliveries/s = %.2f (target >= 0.5: %s)",
                        w, v.label(), node, limit, node / limit, node / limit >= 0.5 ? "met" : "missed"));
            }
            for (String column : List.of("deliveries/s", "deliveries/server-CPU-s")) {
                NodeVariant.baselineRatio(nodes, f, report, "fan-out node W=" + w, column);
            }
        }
        report.note("node fed by " + source + "; frames of " + frame.length
                + " B (a 1 KiB value's JSON frame); the limit writer runs in the bench "
                + "JVM beside the client, the node in its own; etcd, Kafka and the ingester share the same 2 cores");
        report.chart(c).write(System.out, common.resultsDir());
        return 0;
    }

    /** W watchers on {@code v}'s node offered {@code rate} events/s (0 = etcd's max): a warm-up, then the rounds. */
    private void nodeRounds(
            BenchStack stack, NodeVariant v, Load load, double rate, int w, Figures f, Progress progress)
            throws Exception {
        BenchStack.Node node = v.node();
        String nodeRow = "fan-out node W=" + w + v.label();
        progress.log(String.format(
                "attaching %d watchers to the fan-out node%s (fed %s)",
                w,
                v.label(),
                rate > 0 ? String.format("%.0f events/s from Kafka", rate) : "by etcd at its max write rate"));
        Map<String, Long> pids = new LinkedHashMap<>();
        pids.put("node", node.pid());
        pids.put("kafka", stack.kafka().pid());
        if (source.equals("etcd")) {
            pids.put("etcd", stack.etcd().pid());
            pids.put("ingest", stack.ingester().pid());
        }
        pids.put("client", Proc.self());
        try (WatchTarget t = WatchTarget.http(
                node.port, FanoutVsEtcdScenario.PREFIX_QUERY, w, WatchLoadClient.Format.JSON, clientThreads, 0)) {
            awaitLive(t, load, w);
            // A quarter of the rate: at the full rate the cold JVMs (node and client) fall behind the
            // history window within seconds, and their watchers end with 410 before the first round.
            Round.warmUp(load, rate / 4, common.warmup, t::deliveries, progress, nodeRow);
            for (int r = 0; r < common.rounds; r++) {
                Map<String, Double> m0 = node.metrics();
                Round.Result res = Round.run(
                        load,
                        rate,
                        common.duration.toNanos(),
                        pids,
                        t::deliveries,
                        null,
                        progress,
                        nodeRow + " round " + (r + 1) + "/" + common.rounds);
                Map<String, Double> m1 = node.metrics();
                f.add(nodeRow, "deliveries/s", res.deliveriesPerSecond);
                f.add(nodeRow, "events/s offered", res.putsPerSecond);
                f.add(nodeRow, "delivered %", 100.0 * res.deliveries / Math.max(1.0, (double) res.puts * w));
                f.add(nodeRow, "server CPU %", 100 * res.cores("node"));
                f.add(nodeRow, "client CPU %", 100 * res.cores("client"));
                f.add(nodeRow, "deliveries/server-CPU-s", res.deliveries / res.cpuSeconds.get("node"));
                f.add(
                        nodeRow,
                        "parked",
                        BenchStack.sum(m1, "watchfanout_watchers_parked_total")
                                - BenchStack.sum(m0, "watchfanout_watchers_parked_total"));
                f.add(nodeRow, "open watchers", BenchStack.sum(m1, "watchfanout_watchers"));
            }
        }
    }

    /** Feeds single events until every watcher got one (all streams live). */
    private static void awaitLive(WatchTarget t, Load load, int watchers) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 120_000;
        while (System.currentTimeMillis() < deadline) {
            long before = t.deliveries();
            load.run(1000, 1_000_000L);
            load.drain(5000);
            long wait = System.currentTimeMillis() + 3000;
            while (System.currentTimeMillis() < wait) {
                if (t.deliveries() - before >= watchers) {
                    Thread.sleep(300);
                    return;
                }
                Thread.sleep(20);
            }
        }
        throw new IllegalStateException("watchers not all live within 120 s");
    }
}
