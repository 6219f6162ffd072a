package io.watchfanout.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Encode-once against encode-per-watcher: two fan-out nodes on the same topics, one as shipped
 * and one started with the benchmark-only flag {@code --bench-encode-per-watcher} (a frame
 * encoded for every delivery, as a naive server does), loaded one at a time with W watchers of
 * one encoding at a fixed write rate: encodes per event (from the node's
 * {@code watchfanout_frames_encoded_total}), node CPU per delivery, deliveries/s.
 */
@Command(
        name = "memo",
        mixinStandardHelpOptions = true,
        description =
                "Encode-once vs encode-per-watcher (benchmark-only node flag), JSON and protobuf, W = 10,100,1000.")
final class MemoScenario implements Callable<Integer> {
    @Mixin
    CommonOptions common;

    @Option(
            names = "--watchers",
            split = ",",
            defaultValue = "10,100,1000",
            paramLabel = "W,...",
            description = "Watcher counts (default: ${DEFAULT-VALUE}).")
    List<Integer> watchers;

    @Option(names = "--rate", defaultValue = "100", description = "etcd puts/s (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--encodings",
            split = ",",
            defaultValue = "JSON,PROTOBUF",
            paramLabel = "E,...",
            description = "Encodings (default: ${DEFAULT-VALUE}).")
    List<WatchLoadClient.Format> encodings;

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        String prefix = FanoutVsEtcdScenario.PREFIX;
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startEtcd().startKafka().startIngester();
            Map<String, BenchStack.Node> nodes = new LinkedHashMap<>();
            nodes.put("once", stack.startNode(List.of(), List.of(), "2g"));
            nodes.put("per-watcher", stack.startNode(List.of("--bench-encode-per-watcher"), List.of(), "2g"));
            LoadGenerator load = new LoadGenerator(stack.etcdClient(), prefix, 1000, 1024, 256);
            for (WatchLoadClient.Format enc : encodings) {
                for (int w : watchers) {
                    for (Map.Entry<String, BenchStack.Node> n : nodes.entrySet()) {
                        BenchStack.Node node = n.getValue();
                        String row = n.getKey() + " " + enc + " W=" + w;
                        progress.log("attaching " + w + " " + enc + " watchers to the " + n.getKey() + " node");
                        Map<String, Long> pids = new LinkedHashMap<>();
                        pids.put("node", node.pid());
                        try (WatchTarget t =
                                WatchTarget.http(node.port, FanoutVsEtcdScenario.PREFIX_QUERY, w, enc, 1, 10)) {
                            WatchTarget.awaitLive(t, stack.etcdClient(), prefix, w, 120_000);
                            Round.warmUp(load, rate, common.warmup, t::deliveries, progress, row);
                            for (int r = 0; r < common.rounds; r++) {
                                Map<String, Double> m0 = node.metrics();
                                Round.Result res = Round.run(
                                        load,
                                        rate,
                                        common.duration.toNanos(),
                                        pids,
                                        t::deliveries,
                                        t.latency(),
                                        progress,
                                        row + " round " + (r + 1) + "/" + common.rounds);
                                Map<String, Double> m1 = node.metrics();
                                double events = BenchStack.sum(m1, "watchfanout_events_dispatched_total")
                                        - BenchStack.sum(m0, "watchfanout_events_dispatched_total");
                                double encodes = encodes(m1, enc) - encodes(m0, enc);
                                f.add(row, "encodes/event", encodes / events);
                                f.add(row, "deliveries/s", res.deliveriesPerSecond);
                                f.add(row, "node CPU %", 100 * res.cores("node"));
                                f.add(row, "node CPU us/delivery", 1e6 * res.cpuSeconds.get("node") / res.deliveries);
                                f.add(row, "p99 ms", res.percentileMillis(99));
                            }
                        }
                    }
                }
            }
        }
        Report report = new Report("memo", f);
        Report.Chart cpu =
                new Report.Chart("cpu-per-delivery", "Node CPU per delivery", "watchers", "us CPU / delivery", true);
        for (WatchLoadClient.Format enc : encodings) {
            for (int w : watchers) {
                String once = "once " + enc + " W=" + w;
                String per = "per-watcher " + enc + " W=" + w;
                cpu.point("encode once " + enc, w, f.median(once, "node CPU us/delivery"));
                cpu.point("encode per watcher " + enc, w, f.median(per, "node CPU us/delivery"));
                report.ratio(String.format(
                        "%s W=%d: encodes/event %.2f (target = 1 encoding in use: %s) vs %.1f per watcher; "
                                + "node CPU per delivery per-watcher / once = %.2f",
                        enc,
                        w,
                        f.median(once, "encodes/event"),
                        Math.abs(f.median(once, "encodes/event") - 1) < 0.01 ? "met" : "missed",
                        f.median(per, "encodes/event"),
                        f.median(per, "node CPU us/delivery") / f.median(once, "node CPU us/delivery")));
            }
        }
        report.note("both nodes consume the same topics; the idle one still applies every event (no watchers)");
        report.chart(cpu).write(System.out, common.resultsDir());
        return 0;
    }

    private static double encodes(Map<String, Double> m, WatchLoadClient.Format enc) {
        String e = "encoding=\"" + enc.name().toLowerCase(Locale.ROOT) + "\"";
        double s = 0;
        for (Map.Entry<String, Double> x : m.entrySet()) {
            if (x.getKey().startsWith("watchfanout_frames_encoded_total{")
                    && x.getKey().contains(e)
                    && x.getKey().contains("kind=\"event\"")) {
                s += x.getValue();
            }
        }
        return s;
    }
}
