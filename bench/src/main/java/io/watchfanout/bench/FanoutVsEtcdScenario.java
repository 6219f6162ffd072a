package io.watchfanout.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * W watchers of one prefix, fed by the same etcd write load, watching (a) one fan-out node over
 * HTTP, (b) the same node over its etcd API with jetcd, (c) etcd directly with jetcd, (d) an
 * {@code etcd grpc-proxy}: deliveries/s, put→delivery latency, and CPU and RSS of etcd and of the
 * serving process.
 */
@Command(
        name = "fanout-vs-etcd",
        mixinStandardHelpOptions = true,
        description =
                "W watchers on one fan-out node (HTTP, and jetcd on its etcd API) vs etcd directly (jetcd) vs etcd "
                        + "grpc-proxy, same write load.")
final class FanoutVsEtcdScenario implements Callable<Integer> {
    static final String PREFIX = "/bench/";
    static final String PREFIX_QUERY = "%2Fbench%2F";
    private static final List<String> TARGETS = List.of("fanout", "fanout-grpc", "etcd", "proxy");

    @Mixin
    CommonOptions common;

    @Option(
            names = "--watchers",
            split = ",",
            defaultValue = "10,100,1000,5000",
            paramLabel = "W,...",
            description = "Watcher counts (default: ${DEFAULT-VALUE}).")
    List<Integer> watchers;

    @Option(
            names = "--targets",
            split = ",",
            defaultValue = "fanout,fanout-grpc,etcd,proxy",
            paramLabel = "T,...",
            description =
                    "Which of fanout (the node over HTTP), fanout-grpc (the node's etcd API, jetcd), etcd, proxy to run "
                            + "(default: ${DEFAULT-VALUE}).")
    List<String> targets;

    @Option(
            names = "--rate",
            defaultValue = "100",
            paramLabel = "PUTS_PER_S|max",
            description =
                    "etcd write rate, puts/s, or max (open loop as fast as etcd acknowledges) (default: ${DEFAULT-VALUE}).")
    String rate;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(
            names = "--jetcd-clients",
            defaultValue = "4",
            description = "jetcd clients the etcd/proxy watchers are spread over (default: ${DEFAULT-VALUE}).")
    int jetcdClients;

    @Option(
            names = "--client-threads",
            defaultValue = "1",
            description = "Selector threads of the HTTP watch client (default: ${DEFAULT-VALUE}).")
    int clientThreads;

    @Option(
            names = "--sample-every",
            defaultValue = "10",
            description = "Record latency on every n-th watcher (default: ${DEFAULT-VALUE}).")
    int sampleEvery;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        double putRate = parseRate(rate);
        for (int w : watchers) {
            if (w < 1) {
                throw usage("--watchers: " + w + " (expected: >= 1)");
            }
        }
        for (String t : targets) {
            if (!TARGETS.contains(t)) {
                throw usage("--targets: " + t + " (expected: fanout, fanout-grpc, etcd, proxy)");
            }
        }
        common.check(spec);
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startEtcd().startKafka().startIngester();
            int etcdApiPort = io.watchfanout.testkit.FreePorts.pick();
            BenchStack.Node node = stack.startNode(
                    List.of(
                            "--etcd-api-port",
                            Integer.toString(etcdApiPort),
                            "--etcd-endpoints",
                            stack.etcd().clientUrl()),
                    List.of(),
                    "2g");
            GrpcProxy proxy = null;
            if (targets.contains("proxy")) {
                proxy = new GrpcProxy(
                        stack.etcd().clientUrl(), common.resultsDir().resolve("grpc-proxy.log"));
                GrpcProxy p = proxy;
                stack.closeLater(p);
            }
            LoadGenerator load = new LoadGenerator(stack.etcdClient(), PREFIX, 1000, valueBytes, 256);
            for (int w : watchers) {
                for (String t : targets) {
                    String row = t + " W=" + w;
                    progress.log("attaching " + w + " watchers to " + t);
                    Map<String, Long> pids = new LinkedHashMap<>();
                    pids.put("etcd", stack.etcd().pid());
                    WatchTarget target;
                    switch (t) {
                        case "fanout":
                            pids.put("server", node.pid());
                            pids.put("ingest", stack.ingester().pid());
                            pids.put("kafka", stack.kafka().pid());
                            target = WatchTarget.http(
                                    node.port,
                                    PREFIX_QUERY,
                                    w,
                                    WatchLoadClient.Format.JSON,
                                    clientThreads,
                                    sampleEvery);
                            break;
                        case "fanout-grpc":
                            pids.put("server", node.pid());
                            pids.put("ingest", stack.ingester().pid());
                            pids.put("kafka", stack.kafka().pid());
                            target = WatchTarget.jetcd(
                                    "http://127.0.0.1:" + etcdApiPort, PREFIX, w, jetcdClients, sampleEvery);
                            break;
                        case "etcd":
                            target = WatchTarget.jetcd(stack.etcd().clientUrl(), PREFIX, w, jetcdClients, sampleEvery);
                            break;
                        case "proxy":
                            pids.put("server", proxy.pid());
                            target = WatchTarget.jetcd(proxy.endpoint(), PREFIX, w, jetcdClients, sampleEvery);
                            break;
                        default:
                            throw new IllegalArgumentException("--targets: " + t + " (expected: fanout, etcd, proxy)");
                    }
                    pids.put("client", Proc.self());
                    try (target) {
                        WatchTarget.awaitLive(target, stack.etcdClient(), PREFIX, w, 120_000);
                        Round.warmUp(load, putRate, common.warmup, target::deliveries, progress, row);
                        for (int r = 0; r < common.rounds; r++) {
                            Round.Result res = Round.run(
                                    load,
                                    putRate,
                                    common.duration.toNanos(),
                                    pids,
                                    target::deliveries,
                                    target.latency(),
                                    progress,
                                    row + " round " + (r + 1) + "/" + common.rounds);
                            f.add(row, "puts/s", res.putsPerSecond);
                            f.add(row, "deliveries/s", res.deliveriesPerSecond);
                            f.add(row, "delivered %", 100.0 * res.deliveries / Math.max(1, res.puts * (double) w));
                            f.add(row, "p50 ms", res.percentileMillis(50));
                            f.add(row, "p99 ms", res.percentileMillis(99));
                            f.add(row, "p999 ms", res.percentileMillis(99.9));
                            f.add(row, "etcd CPU %", 100 * res.cores("etcd"));
                            f.add(row, "etcd RSS MiB", res.rssMiB.get("etcd"));
                            double serveCpu =
                                    t.equals("etcd") ? res.cpuSeconds.get("etcd") : res.cpuSeconds.get("server");
                            f.add(row, "server CPU %", 100 * serveCpu / res.seconds);
                            f.add(
                                    row,
                                    "server RSS MiB",
                                    t.equals("etcd") ? res.rssMiB.get("etcd") : res.rssMiB.get("server"));
                            if (t.startsWith("fanout")) {
                                f.add(row, "ingest+kafka CPU %", 100 * (res.cores("ingest") + res.cores("kafka")));
                            }
                            f.add(row, "deliveries/server-CPU-s", res.deliveries / serveCpu);
                            f.add(row, "client CPU %", 100 * res.cores("client"));
                        }
                    }
                }
            }
        }
        Report report = new Report("fanout-vs-etcd", f);
        report.note(
                "server = the fan-out node (fanout over HTTP, fanout-grpc over its etcd API with jetcd), etcd itself "
                        + "(etcd), the grpc-proxy process (proxy); "
                        + "rate " + rate + " puts/s of " + valueBytes
                        + " B values; all on one 2-core box with the load client");
        Report.Chart rates =
                new Report.Chart("deliveries", "Deliveries/s by watchers", "watchers", "deliveries/s", true);
        Report.Chart p99 = new Report.Chart("p99", "put->delivery p99 latency", "watchers", "ms", true);
        Report.Chart etcdCpu = new Report.Chart("etcd-cpu", "etcd CPU by watchers", "watchers", "etcd CPU %", true);
        Report.Chart eff = new Report.Chart(
                "efficiency",
                "Deliveries per CPU-second of the serving process",
                "watchers",
                "deliveries / CPU-s",
                true);
        for (String t : targets) {
            for (int w : watchers) {
                String row = t + " W=" + w;
                rates.point(t, w, f.median(row, "deliveries/s"));
                p99.point(t, w, f.median(row, "p99 ms"));
                etcdCpu.point(t, w, f.median(row, "etcd CPU %"));
                eff.point(t, w, f.median(row, "deliveries/server-CPU-s"));
            }
        }
        report.chart(rates).chart(p99).chart(etcdCpu).chart(eff);
        if (targets.contains("fanout") && targets.contains("etcd")) {
            for (int w : watchers) {
                double ratio = f.median("fanout W=" + w, "deliveries/s") / f.median("etcd W=" + w, "deliveries/s");
                report.ratio(String.format(
                        "W=%d: fan-out/etcd deliveries/s %.2fx, p99 %s ms vs %s ms",
                        w,
                        ratio,
                        Report.fmt(f.median("fanout W=" + w, "p99 ms")),
                        Report.fmt(f.median("etcd W=" + w, "p99 ms"))));
            }
            if (targets.contains("fanout-grpc")) {
                for (int w : watchers) {
                    report.ratio(String.format(
                            "W=%d: fan-out over its etcd API/etcd deliveries/s %.2fx, p99 %s ms vs %s ms",
                            w,
                            f.median("fanout-grpc W=" + w, "deliveries/s") / f.median("etcd W=" + w, "deliveries/s"),
                            Report.fmt(f.median("fanout-grpc W=" + w, "p99 ms")),
                            Report.fmt(f.median("etcd W=" + w, "p99 ms"))));
                }
            }
            int lo = watchers.get(0);
            int hi = watchers.get(watchers.size() - 1);
            double c0 = f.median("fanout W=" + lo, "etcd CPU %");
            double c1 = f.median("fanout W=" + hi, "etcd CPU %");
            report.ratio(String.format(
                    "etcd CPU through the tier, W=%d -> W=%d: %.1f%% -> %.1f%% (%+.0f%%; target within +-10%%)",
                    lo, hi, c0, c1, 100 * (c1 - c0) / c0));
        }
        report.write(System.out, common.resultsDir());
        return 0;
    }

    private double parseRate(String value) {
        if ("max".equals(value)) {
            return 0;
        }
        try {
            double r = Double.parseDouble(value);
            if (r > 0) {
                return r;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw usage("--rate: " + value + " (expected: puts per second > 0, or max)");
    }

    private picocli.CommandLine.ParameterException usage(String message) {
        return new picocli.CommandLine.ParameterException(spec.commandLine(), message);
    }
}
