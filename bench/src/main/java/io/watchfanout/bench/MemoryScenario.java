package io.watchfanout.bench;

import io.watchfanout.testkit.JavaProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Memory per cached key of a fan-out node: for each cache size (K keys of V-byte values) a fresh
 * child JVM ({@link MemoryProbeMain}) builds the node's watch core, loads the state, fills the
 * history window and encodes each window event's JSON frame once, measuring live heap after full
 * GCs, RSS and direct buffers at each step. Reports heap and RSS per key against the target
 * {@code 1.25 × (key + value) + 200 B}, the history window's heap per event, and the frames'
 * direct bytes per event. Needs no etcd or Kafka.
 */
@Command(
        name = "memory",
        mixinStandardHelpOptions = true,
        description =
                "Bytes per cached key: K keys x V-byte values in a fresh JVM's watch core, window and frames apart.")
final class MemoryScenario implements Callable<Integer> {
    private static final double MIB = 1024.0 * 1024;
    private static final long GIB = 1L << 30;

    @Mixin
    CommonOptions common;

    @Option(
            names = "--keys",
            split = ",",
            defaultValue = "100000,1000000",
            paramLabel = "K,...",
            description = "Cache sizes, keys (default: ${DEFAULT-VALUE}).")
    List<Integer> keyCounts;

    @Option(
            names = "--value-bytes",
            split = ",",
            defaultValue = "256,1024,8192",
            paramLabel = "V,...",
            description = "Value sizes, bytes (default: ${DEFAULT-VALUE}).")
    List<Integer> valueSizes;

    @Option(
            names = "--window-events",
            defaultValue = "100000",
            paramLabel = "W",
            description =
                    "Single-event revisions applied after the load to fill the history window, which holds as many "
                            + "(the node's --history-max-events default; default: ${DEFAULT-VALUE}; 0 = window not measured).")
    int windowEvents;

    @Option(
            names = "--max-payload-mib",
            defaultValue = "2048",
            paramLabel = "MIB",
            description =
                    "Sizes whose K x (key + value) exceeds this are skipped, so that the child fits beside the rest "
                            + "of the box (default: ${DEFAULT-VALUE}: 1M x 8 KiB is skipped).")
    long maxPayloadMib;

    @Option(
            names = "--child-heap",
            defaultValue = "auto",
            paramLabel = "SIZE",
            description =
                    "The child's -Xmx, e.g. 8g; auto = about 3 x the state's payload + 4 x the window's, at least 1g "
                            + "(default: ${DEFAULT-VALUE}).")
    String childHeap;

    @Option(
            names = "--histogram",
            defaultValue = "0",
            paramLabel = "N",
            description = "Also print the top N classes of GC.class_histogram of each child at its end and write the "
                    + "histogram to the results directory (default: ${DEFAULT-VALUE} = none).")
    int histogram;

    @Override
    public Integer call() throws Exception {
        Progress progress = new Progress();
        Figures f = new Figures();
        Report report = new Report("memory", f);
        int keyBytes = MemoryProbeMain.key(0).length;
        List<String> histograms = new ArrayList<>();
        for (int keys : keyCounts) {
            for (int valueBytes : valueSizes) {
                String row = "K=" + count(keys) + " V=" + bytes(valueBytes);
                long payload = (long) keys * (keyBytes + valueBytes);
                if (payload > maxPayloadMib * (1L << 20)) {
                    report.note(String.format(
                            Locale.ROOT,
                            "%s skipped: K x (key + value) = %.0f MiB > --max-payload-mib %d",
                            row,
                            payload / MIB,
                            maxPayloadMib));
                    continue;
                }
                String heap = childHeap.equals("auto")
                        ? autoHeap(payload, (long) windowEvents * (keyBytes + valueBytes))
                        : childHeap;
                for (int r = 0; r < common.rounds; r++) {
                    progress.log(row + " round " + (r + 1) + "/" + common.rounds + ": child JVM -Xmx" + heap);
                    Map<String, Long> m = probe(keys, valueBytes, heap, r == 0 ? histogram : 0, histograms);
                    add(f, row, m, keys, valueBytes);
                }
                report.note(row + ": child -Xmx" + heap);
            }
        }
        for (String row : f.rows()) {
            double perKey = f.median(row, "heap B/key");
            double target = f.median(row, "target B/key");
            report.ratio(String.format(
                    Locale.ROOT,
                    "%s: heap %.0f B/key = %.2f x the target %.0f B (%s); with the window "
                            + "%.0f B/key; RSS %.0f B/key",
                    row,
                    perKey,
                    perKey / target,
                    target,
                    perKey <= target ? "met" : "missed",
                    f.median(row, "heap+window B/key"),
                    f.median(row, "RSS B/key")));
        }
        report.note("heap B/key = (live heap after full GC with the state loaded, window empty - the empty JVM's) / K; "
                + "target = 1.25 x (key + value) + 200 B; RSS B/key the same with VmRSS");
        report.note(
                "window B/event = heap added by " + windowEvents + " MODIFIED events with prev_kv (each replaces its "
                        + "key's state); frame direct B/event = direct buffers of their JSON frames, encoded once; frame heap the "
                        + "ByteBuffer objects");
        report.write(System.out, common.resultsDir());
        if (!histograms.isEmpty()) {
            String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
            Path file = common.resultsDir().resolve("memory-" + stamp + "-class-histogram.txt");
            Files.writeString(file, String.join("\n", histograms) + "\n", StandardCharsets.UTF_8);
            System.out.println();
            histograms.forEach(System.out::println);
            System.out.println("  wrote " + file);
        }
        return 0;
    }

    /** Runs one child to its end and returns its figures, bytes. */
    private Map<String, Long> probe(int keys, int valueBytes, String heap, int histogramLines, List<String> histograms)
            throws IOException {
        try (JavaProcess child = JavaProcess.builder(MemoryProbeMain.class.getName())
                .name("memory-probe")
                .maxHeap(heap)
                .jvmArg("-XX:+UseG1GC")
                .jvmArg("-XX:MaxDirectMemorySize=" + heap)
                .args(
                        Integer.toString(keys),
                        Integer.toString(valueBytes),
                        Integer.toString(windowEvents),
                        Integer.toString(histogramLines))
                .start()) {
            child.awaitLog("MEMORY-DONE", Duration.ofMinutes(30));
            Map<String, Long> m = new HashMap<>();
            List<String> histo = new ArrayList<>();
            for (String line : Files.readAllLines(child.logFile(), StandardCharsets.UTF_8)) {
                if (line.startsWith("MEMORY-RESULT ")) {
                    for (String kv : line.substring("MEMORY-RESULT ".length()).split(" ")) {
                        int eq = kv.indexOf('=');
                        m.put(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)));
                    }
                } else if (line.startsWith("HISTO ")) {
                    histo.add("  " + line.substring("HISTO ".length()));
                }
            }
            if (m.getOrDefault("cachedKeys", -1L) != keys) {
                throw new IllegalStateException("the child cached " + m.get("cachedKeys") + " keys (expected: " + keys
                        + "); log: " + child.logFile());
            }
            if (!histo.isEmpty()) {
                histograms.add("GC.class_histogram of K=" + keys + " V=" + valueBytes + " at its end (top "
                        + histogramLines + " classes, live objects):");
                histograms.addAll(histo);
                histograms.add("");
            }
            return m;
        }
    }

    private void add(Figures f, String row, Map<String, Long> m, int keys, int valueBytes) {
        double payload = m.get("keyBytes") + valueBytes;
        double target = 1.25 * payload + 200;
        double heapPerKey = (m.get("stateHeap") - m.get("baseHeap")) / (double) keys;
        double events = m.get("windowEvents");
        f.add(row, "payload B/key", payload);
        f.add(row, "heap B/key", heapPerKey);
        f.add(row, "target B/key", target);
        f.add(row, "heap/target", heapPerKey / target);
        f.add(row, "RSS B/key", (m.get("stateRss") - m.get("baseRss")) / (double) keys);
        f.add(row, "window events", events);
        f.add(row, "window B/event", events == 0 ? Double.NaN : (m.get("windowHeap") - m.get("stateHeap")) / events);
        f.add(row, "heap+window B/key", (m.get("windowHeap") - m.get("baseHeap")) / (double) keys);
        f.add(
                row,
                "frame direct B/event",
                events == 0 ? Double.NaN : (m.get("framesDirect") - m.get("windowDirect")) / events);
        f.add(
                row,
                "frame heap B/event",
                events == 0 ? Double.NaN : (m.get("framesHeap") - m.get("windowHeap")) / events);
        f.add(row, "memo B/event", events == 0 ? Double.NaN : m.get("memoBytes") / events);
        f.add(row, "heap MiB", m.get("framesHeap") / MIB);
        f.add(row, "RSS MiB", m.get("framesRss") / MIB);
    }

    /** 100k, 1M, or the number itself. */
    private static String count(int n) {
        return n % 1_000_000 == 0 ? n / 1_000_000 + "M" : n % 1000 == 0 ? n / 1000 + "k" : Integer.toString(n);
    }

    /** 256 B, 1 KiB, 8 KiB. */
    private static String bytes(int n) {
        return n % 1024 == 0 ? n / 1024 + " KiB" : n + " B";
    }

    /** About 3 x the state's payload (the records, their views and the load's garbage) + 4 x the window's, in GiB. */
    private static String autoHeap(long statePayload, long windowPayload) {
        long bytes = 3 * statePayload + 4 * windowPayload;
        return Math.max(1, (bytes + GIB - 1) / GIB + 1) + "g";
    }
}
