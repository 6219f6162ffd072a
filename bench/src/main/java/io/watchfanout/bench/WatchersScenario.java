package io.watchfanout.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Idle watchers on one fan-out node, in steps up to 20,000: RSS and heap per watcher, and the
 * time to attach them. Each round starts a fresh node. Every stream is a distinct single key
 * (the index holds all of them) and sends no frames while idle.
 */
@Command(
        name = "watchers",
        mixinStandardHelpOptions = true,
        description = "Idle watch streams on one fan-out node up to 20,000: RSS per watcher, time to attach.")
final class WatchersScenario implements Callable<Integer> {
    @Mixin
    CommonOptions common;

    @Option(
            names = "--steps",
            split = ",",
            defaultValue = "1000,5000,10000,19500",
            paramLabel = "W,...",
            description = "Cumulative watcher counts (default: ${DEFAULT-VALUE}; the box's open-file limit, "
                    + "ulimit -Hn = 20000 here, caps one process below 20,000 sockets).")
    List<Integer> steps;

    @Option(
            names = "--client-threads",
            defaultValue = "2",
            description = "Selector threads of the HTTP watch client (default: ${DEFAULT-VALUE}).")
    int clientThreads;

    @Option(names = "--node-heap", defaultValue = "1g", description = "Node -Xmx (default: ${DEFAULT-VALUE}).")
    String nodeHeap;

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        try (BenchStack stack = new BenchStack(BenchMain.repo(), progress)) {
            stack.startEtcd().startKafka().startIngester();
            for (int r = 0; r < common.rounds; r++) {
                try (BenchStack.Node node =
                        stack.startNode(List.of("--bookmark-interval", "1h"), List.of(), nodeHeap)) {
                    Thread.sleep(2000);
                    gc(node.pid());
                    long rss0 = Proc.rssBytes(node.pid());
                    double heap0 = heapUsed(node);
                    WatchLoadClient client = new WatchLoadClient(
                            new InetSocketAddress("127.0.0.1", node.port),
                            "/v1/watch?key=%2Fidle%2Fk",
                            WatchLoadClient.Format.JSON,
                            clientThreads,
                            0);
                    try {
                        int have = 0;
                        for (int step : steps) {
                            int add = step - have;
                            long t0 = System.nanoTime();
                            client.open(add);
                            while (client.attached() + client.failed() < step) {
                                if (System.nanoTime() - t0 > TimeUnit.MINUTES.toNanos(5)) {
                                    throw new IllegalStateException(
                                            "attach timed out: " + client.attached() + " of " + step);
                                }
                                progress.show(String.format(
                                        "round %d/%d: %d of %d watchers attached",
                                        r + 1, common.rounds, client.attached(), step));
                                Thread.sleep(20);
                            }
                            double secs = (System.nanoTime() - t0) / 1e9;
                            if (client.failed() > 0) {
                                throw new IllegalStateException(client.failed() + " streams failed at " + step
                                        + " watchers: " + client.lastError());
                            }
                            have = step;
                            Thread.sleep(1000);
                            gc(node.pid());
                            long rss = Proc.rssBytes(node.pid());
                            double heap = heapUsed(node);
                            String row = "W=" + step;
                            f.add(row, "attach s (this step)", secs);
                            f.add(row, "attaches/s", add / secs);
                            f.add(row, "node RSS MiB", rss / 1048576.0);
                            f.add(row, "RSS/watcher KiB", (rss - rss0) / 1024.0 / step);
                            f.add(row, "heap/watcher KiB", (heap - heap0) / 1024.0 / step);
                            progress.log(String.format(
                                    "round %d: %d watchers, RSS %.0f MiB (%.1f KiB/watcher), heap %.1f KiB/watcher, "
                                            + "%.1f s to attach %d",
                                    r + 1,
                                    step,
                                    rss / 1048576.0,
                                    (rss - rss0) / 1024.0 / step,
                                    (heap - heap0) / 1024.0 / step,
                                    secs,
                                    add));
                        }
                    } finally {
                        client.close();
                    }
                }
            }
        }
        Report report = new Report("watchers", f);
        Report.Chart rss = new Report.Chart("rss", "Node RSS by idle watchers", "watchers", "MiB", false);
        Report.Chart per = new Report.Chart("per-watcher", "Memory per idle watcher", "watchers", "KiB", false);
        for (int s : steps) {
            rss.point("node RSS", s, f.median("W=" + s, "node RSS MiB"));
            per.point("RSS / watcher", s, f.median("W=" + s, "RSS/watcher KiB"));
            per.point("heap / watcher (after GC)", s, f.median("W=" + s, "heap/watcher KiB"));
        }
        int top = steps.get(steps.size() - 1);
        double kib = f.median("W=" + top, "RSS/watcher KiB");
        report.ratio(String.format(
                "%d watchers at %.1f KiB RSS each (target: >= 20,000 at <= 16 KiB: %s)",
                top,
                kib,
                top >= 20000 && kib <= 16
                        ? "met"
                        : kib <= 16 ? "memory met; count capped by the open-file limit" : "missed"));
        report.note(
                "RSS/watcher = (RSS at W - RSS of the idle node before any watcher) / W, after a full GC (jcmd GC.run)");
        report.chart(rss).chart(per).write(System.out, common.resultsDir());
        return 0;
    }

    private static void gc(long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("jcmd", Long.toString(pid), "GC.run")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    private static double heapUsed(BenchStack.Node node) throws IOException, InterruptedException {
        Map<String, Double> m = node.metrics();
        Double v = m.get("jvm_memory_bytes_used{area=\"heap\",}");
        if (v == null) {
            v = m.get("jvm_memory_bytes_used{area=\"heap\"}");
        }
        return v == null ? Double.NaN : v;
    }
}
