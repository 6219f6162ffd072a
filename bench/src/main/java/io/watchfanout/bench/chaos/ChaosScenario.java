package io.watchfanout.bench.chaos;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.watchfanout.bench.chaos.ChaosStack.Kind;
import io.watchfanout.bench.chaos.ChaosStack.Part;
import io.watchfanout.bench.chaos.Verifier.Ev;
import io.watchfanout.bench.chaos.Verifier.Result;
import io.watchfanout.common.DurationConverter;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.RevisionChainException;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/chaos} ({@code bin/bench chaos}): runs the whole tier on loopback, writes a mixed
 * workload to etcd, keeps watchers following the resume rule, injects faults of every kind at
 * random, waits for recovery after each, and verifies the events topic and every watcher against
 * etcd's own history. docs/RELIABILITY.md describes the run and every figure it prints.
 */
@Command(
        name = "chaos",
        mixinStandardHelpOptions = true,
        description = {
            "The fault run: random SIGKILL, SIGTERM and SIGSTOP+SIGCONT of etcd, each Kafka broker, each ingester "
                    + "replica and each fan-out node, vanishing and stalling clients, under a mixed etcd workload; verifies every "
                    + "watcher and the events topic against etcd's own history (docs/RELIABILITY.md)."
        },
        footer = {"", "Exit status: 0 when nothing was lost, duplicated or stuck; 1 otherwise; 2 on bad flags."})
public final class ChaosScenario implements Callable<Integer> {
    static final String PREFIX = "/chaos/";

    @Option(
            names = "--faults",
            defaultValue = "20",
            paramLabel = "N",
            description = "Faults to inject (default: ${DEFAULT-VALUE}).")
    int faults;

    @Option(
            names = "--seed",
            paramLabel = "S",
            description = "Seed of the fault sequence and the workload (default: random; printed).")
    Long seed;

    @Option(
            names = "--kafka-brokers",
            defaultValue = "1",
            paramLabel = "1|3",
            description =
                    "One Kafka broker, or three (replication factor 3, min.insync.replicas 2) (default: ${DEFAULT-VALUE}).")
    int brokers;

    @Option(
            names = "--pause",
            defaultValue = "2s",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description =
                    "Normal running between the recovery from one fault and the next fault (default: ${DEFAULT-VALUE}).")
    Duration pause;

    @Option(
            names = "--duration",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Stop injecting after this long, even before --faults (default: no limit).")
    Duration duration;

    @Option(
            names = "--max-fault-time",
            defaultValue = "5s",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description =
                    "Longest SIGSTOP, reader stall or client absence; each lasts 0.5 s to this, at random (default: ${DEFAULT-VALUE}).")
    Duration maxFaultTime;

    @Option(
            names = "--long-cuts",
            defaultValue = "0.2",
            paramLabel = "FRACTION",
            description =
                    "Share of the network cuts that last 12 s to --long-cut-time instead of 0.5 s to --max-fault-time:"
                            + " longer than the 10 s a part has to report a cut on /readyz, and than the 5 s after which a"
                            + " watcher gives up a silent stream (default: ${DEFAULT-VALUE}).")
    double longCuts;

    @Option(
            names = "--long-cut-time",
            defaultValue = "15s",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Longest long network cut, >= 12s (default: ${DEFAULT-VALUE}).")
    Duration longCutTime;

    @Option(
            names = "--overlap",
            defaultValue = "0.15",
            paramLabel = "FRACTION",
            description =
                    "Share of the network cuts of a part that stay in place while a process fault (SIGKILL, SIGTERM or SIGSTOP"
                            + " of any part, at random, whatever --only says) is injected and ends; the cut is healed after both"
                            + " (default: ${DEFAULT-VALUE}).")
    double overlap;

    @Option(
            names = "--no-network-faults",
            description = "Inject no network cuts (they need root, iptables and cgroup2).")
    boolean noNetworkFaults;

    @Option(
            names = "--watchers",
            defaultValue = "30",
            paramLabel = "N",
            description = "Watch clients (default: ${DEFAULT-VALUE}).")
    int watchers;

    @Option(
            names = "--rate",
            defaultValue = "20",
            paramLabel = "N",
            description =
                    "etcd operations per second (a transaction or a lease with its keys counts once) (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--recovery-timeout",
            defaultValue = "120s",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description =
                    "A part not ready or a watcher not caught up this long after a fault ended is stuck (default: ${DEFAULT-VALUE}).")
    Duration recoveryTimeout;

    @Option(
            names = "--election-lease-ttl",
            defaultValue = "5s",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description =
                    "The ingesters' --election-lease-ttl: how long a dead leader delays the standby (default: ${DEFAULT-VALUE}).")
    Duration electionLeaseTtl;

    @Option(
            names = "--only",
            paramLabel = "REGEX",
            description = "Inject only the fault kinds matching this (e.g. 'SIGKILL.*node').")
    String only;

    @Option(
            names = "--results",
            defaultValue = "bench/results",
            paramLabel = "DIR",
            description =
                    "Where the run directory (logs, fault log) goes, relative to the repository (default: ${DEFAULT-VALUE}).")
    Path results;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final PrintStream out = System.out;
    private final long started = System.nanoTime();
    private Path faultLog;

    /** One injected fault and how the tier came back. */
    /**
     * One fault's result. {@code stallMillis}: from the fault's injection until every watcher had received a
     * marker written after it ended, whether or not every part was ready again (the tier's stall as its watchers
     * see it); -1 when they never did.
     */
    record Outcome(
            int n, String kind, String target, long recoveryMillis, long stallMillis, boolean stuck, String detail) {}

    /**
     * What a part reported during one network cut of it longer than {@link #DETECTION_BOUND_MILLIS}: the
     * milliseconds from the cut to the first {@code /readyz} answer and the first metric that showed it, -1
     * when none did while the cut lasted.
     */
    record Detection(String kind, long cutMillis, long readyzMillis, long metricMillis) {}

    /** A fault the tier cannot recover from by itself must show in /readyz and a metric within this. */
    static final long DETECTION_BOUND_MILLIS = 10_000;

    private enum Action {
        SIGKILL,
        SIGTERM,
        SIGSTOP,
        VANISH,
        STALL,
        CUT
    }

    /** Whom a network cut separates from what. */
    private enum Net {
        /** An ingester from etcd. */
        ETCD,
        /** An ingester from one broker, chosen at random at the cut. */
        ONE_BROKER,
        /** An ingester from every broker. */
        ALL_BROKERS,
        /** A node from every broker. */
        KAFKA,
        /** A watcher's connection to its node. */
        CLIENT
    }

    private record Choice(Action action, Part part, Net net) {
        Choice(Action action, Part part) {
            this(action, part, null);
        }
    }

    private NetworkCuts cuts;
    private final List<Detection> detections = new ArrayList<>();
    /** By kind of cut (not overlapped): {@link CutWatch#longestWait} of each. */
    private final Map<String, List<Long>> cutWaits = new TreeMap<>();

    @Override
    public Integer call() throws Exception {
        check();
        long s = seed != null ? seed : new Random().nextLong() & Long.MAX_VALUE;
        Path repo = Path.of(System.getProperty("watchfanout.repo", "."))
                .toAbsolutePath()
                .normalize();
        Path runDir = repo.resolve(results)
                .resolve("chaos-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")))
                .toAbsolutePath();
        Files.createDirectories(runDir);
        faultLog = runDir.resolve("faults.log");
        out.printf(
                "chaos: seed %d, %d faults, Kafka brokers %d, %d watchers, %.0f ops/s, pause %s, faults up to %s%n",
                s, faults, brokers, watchers, rate, pause.toMillis() + "ms", maxFaultTime.toMillis() + "ms");
        out.printf(
                "  replay: bin/chaos --seed %d --faults %d --kafka-brokers %d --watchers %d --rate %s --pause %dms"
                        + " --max-fault-time %dms%s%s%n",
                s,
                faults,
                brokers,
                watchers,
                fmt(rate),
                pause.toMillis(),
                maxFaultTime.toMillis(),
                noNetworkFaults
                        ? " --no-network-faults"
                        : " --long-cuts " + longCuts + " --long-cut-time " + longCutTime.toMillis() + "ms --overlap "
                                + overlap,
                only != null ? " --only '" + only + "'" : "");
        out.println("  logs: " + runDir);
        Random random = new Random(s);
        List<String> ingesterFlags = List.of("--election-lease-ttl", electionLeaseTtl.toMillis() + "ms");
        List<String> nodeFlags = List.of("--bookmark-interval", "1s");
        if (!noNetworkFaults) {
            try {
                cuts = NetworkCuts.open(Long.toString(ProcessHandle.current().pid() % 1_000_000, 36), this::log);
            } catch (NetworkCuts.Unavailable e) {
                out.println("  network faults skipped: " + e.getMessage());
            }
        }
        try (NetworkCuts network = cuts;
                ChaosStack stack = new ChaosStack(repo, runDir, brokers, this::log)) {
            if (network != null) {
                stack.onStart(p -> network.adopt(p.name, p.pid()));
            }
            stack.start(ingesterFlags, nodeFlags);
            log("tier ready: etcd " + stack.etcdUrl() + ", Kafka " + stack.bootstrapServers() + ", nodes "
                    + Arrays.toString(stack.nodePorts()));
            Client client = Client.builder().endpoints(stack.etcdUrl()).build();
            try {
                return run(stack, client, random, s);
            } finally {
                client.close();
            }
        }
    }

    private int run(ChaosStack stack, Client client, Random random, long s) throws Exception {
        long startRev = client.getKVClient()
                .get(ByteSequence.from("/", StandardCharsets.UTF_8))
                .get(10, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
        List<ChaosWatcher> ws = new ArrayList<>();
        for (int i = 0; i < watchers; i++) {
            ws.add(new ChaosWatcher(i, stack.nodePorts(), PREFIX, startRev, 5000).begin());
        }
        ChaosWorkload workload = new ChaosWorkload(client, PREFIX, rate, random.nextLong());
        Thread writer = new Thread(workload, "chaos-workload");
        writer.setDaemon(true);
        writer.start();
        log("watching from revision " + startRev + "; writing " + fmt(rate) + " ops/s");
        List<Choice> menu = menu(stack);
        List<Outcome> outcomes = new ArrayList<>();
        Map<String, Integer> exits = new TreeMap<>();
        // a first round without a fault: the baseline of the recovery figure
        Outcome base = recover(
                stack, workload, ws, 0, "none (baseline)", "-", System.nanoTime(), System.nanoTime(), exits, () -> "");
        outcomes.add(base);
        long runStart = System.nanoTime();
        for (int n = 1; n <= faults; n++) {
            if (duration != null && System.nanoTime() - runStart > duration.toNanos()) {
                log("--duration " + duration + " reached after " + (n - 1) + " faults");
                break;
            }
            Thread.sleep(pause.toMillis());
            Choice c = menu.get(random.nextInt(menu.size()));
            long faultMillis = 500 + (long) (random.nextDouble() * Math.max(0, maxFaultTime.toMillis() - 500));
            String kind = kind(stack, c);
            long injected = System.nanoTime();
            Injected f = c.action == Action.CUT
                    ? cut(stack, workload, ws, c, kind, random, processFaults(stack))
                    : processFault(c, kind, faultMillis, ws, random);
            Supplier<String> streams = c.net == Net.CLIENT ? () -> streamsNotReleased(stack, ws.size()) : () -> "";
            Outcome o = recover(
                    stack,
                    workload,
                    ws,
                    n,
                    f.kind,
                    f.target,
                    f.injected > 0 ? f.injected : injected,
                    f.healed,
                    exits,
                    streams);
            outcomes.add(o);
        }
        log("faults done; final check");
        Outcome fin = finalCheck(stack, workload, ws, faults + 1, exits);
        workload.stop();
        writer.join(10_000);
        long endRev = workload.mark(30_000);
        Outcome last = finalCheck(stack, workload, ws, faults + 2, exits);
        outcomes.add(fin);
        outcomes.add(last);
        for (ChaosWatcher w : ws) {
            w.close();
        }
        log("verifying against etcd's history (" + startRev + ", " + endRev + "]");
        return report(stack, client, ws, workload, outcomes, exits, startRev, endRev, s);
    }

    /** A fault as injected: its kind and target as the report names them, when it began and ended (nanoTime). */
    private record Injected(String kind, String target, long injected, long healed) {}

    /** A signal to a part, a vanishing or a stalling client; returns when the fault ended. */
    private Injected processFault(Choice c, String kind, long faultMillis, List<ChaosWatcher> ws, Random random)
            throws InterruptedException {
        String target = c.part != null ? c.part.name : "";
        long healed;
        switch (c.action) {
            case SIGKILL -> {
                c.part.kill();
                healed = System.nanoTime();
                c.part.start();
            }
            case SIGTERM -> {
                c.part.term();
                healed = System.nanoTime();
                c.part.start();
            }
            case SIGSTOP -> {
                long pid = c.part.pid();
                ChaosStack.signal(pid, "STOP");
                Thread.sleep(faultMillis);
                healed = System.nanoTime();
                ChaosStack.signal(pid, "CONT");
                target += " " + faultMillis + "ms";
            }
            case VANISH -> {
                ChaosWatcher w = ws.get(random.nextInt(ws.size()));
                w.vanish(faultMillis);
                Thread.sleep(faultMillis);
                healed = System.nanoTime();
                target = "watcher-" + w.id() + " " + faultMillis + "ms";
            }
            case STALL -> {
                ChaosWatcher w = ws.get(random.nextInt(ws.size()));
                w.stall(faultMillis);
                Thread.sleep(faultMillis);
                healed = System.nanoTime();
                target = "watcher-" + w.id() + " " + faultMillis + "ms";
            }
            default -> throw new IllegalStateException(c.action.toString());
        }
        return new Injected(kind, target, 0, healed);
    }

    /** SIGKILL, SIGTERM and SIGSTOP of every part: what a cut may overlap. */
    private static List<Choice> processFaults(ChaosStack stack) {
        List<Choice> list = new ArrayList<>();
        for (Part p : stack.parts()) {
            for (Action a : List.of(Action.SIGKILL, Action.SIGTERM, Action.SIGSTOP)) {
                list.add(new Choice(a, p));
            }
        }
        return list;
    }

    /**
     * A network cut: drops the packets between a part and a server (or of a watcher's connection) for
     * 0.5 s to --max-fault-time, or, for a share --long-cuts of them, 12 s to --long-cut-time;
     * watches meanwhile what the cut part reports; for a share --overlap, a process fault is injected (and
     * ends) while the cut stays. Returns once the cut is healed.
     */
    private Injected cut(
            ChaosStack stack,
            ChaosWorkload workload,
            List<ChaosWatcher> ws,
            Choice c,
            String kind,
            Random random,
            List<Choice> overlapMenu)
            throws InterruptedException {
        boolean client = c.net == Net.CLIENT;
        long millis = random.nextDouble() < longCuts
                ? 12_000 + (long) (random.nextDouble() * (longCutTime.toMillis() - 12_000))
                : 500 + (long) (random.nextDouble() * Math.max(0, maxFaultTime.toMillis() - 500));
        Choice second =
                !client && random.nextDouble() < overlap ? overlapMenu.get(random.nextInt(overlapMenu.size())) : null;
        long secondAt = (long) (random.nextDouble() * millis / 2);
        long secondMillis = 500 + (long) (random.nextDouble() * Math.max(0, maxFaultTime.toMillis() - 500));
        NetworkCuts.Cut cut;
        String target;
        if (client) {
            int first = random.nextInt(ws.size());
            int[] ports = null;
            ChaosWatcher w = null;
            for (int i = 0; i < ws.size() && ports == null; i++) {
                w = ws.get((first + i) % ws.size());
                ports = w.streamPorts();
            }
            if (ports == null) {
                Thread.sleep(millis);
                return new Injected(kind, "no watcher was streaming", 0, System.nanoTime());
            }
            cut = cuts.cutConnection(ports[0], ports[1]);
            target = "watcher-" + w.id() + " :" + ports[0] + "-:" + ports[1];
        } else {
            List<Integer> brokerPorts = stack.brokerPorts();
            List<Integer> serverPorts;
            target = c.part.name;
            if (c.net == Net.ETCD) {
                serverPorts = List.of(stack.etcdPort());
            } else if (c.net == Net.ONE_BROKER) {
                int b = random.nextInt(brokerPorts.size());
                serverPorts = List.of(brokerPorts.get(b));
                String broker = "kafka-" + (b + 1);
                String leader = stack.eventsLeader();
                kind += broker.equals(leader) ? " (events leader)" : " (follower)";
                target += " from " + broker;
            } else {
                serverPorts = brokerPorts;
            }
            cut = cuts.cutPart(c.part.name, serverPorts);
        }
        long injected = System.nanoTime();
        long end = injected + millis * 1_000_000;
        CutWatch watch = new CutWatch(
                client ? null : (ChaosStack.JavaPart) c.part, c.net, !client && stack.isLeader(c.part), workload, ws);
        String cutKind = kind;
        target += " " + millis + "ms";
        if (second != null) {
            watch(watch, injected + secondAt * 1_000_000, injected);
            String secondKind = kind(stack, second);
            Injected s = processFault(second, secondKind, secondMillis, ws, random);
            target = cutKind + " " + target + " + " + secondKind + " " + s.target();
            kind = "cut overlapping a process fault";
        }
        watch(watch, end, injected);
        cut.heal();
        long healed = System.nanoTime();
        if (second == null) {
            cutWaits.computeIfAbsent(cutKind, k -> new ArrayList<>()).add(watch.longestWait(healed));
        }
        if (!client && second == null && millis > DETECTION_BOUND_MILLIS) {
            Detection d = new Detection(cutKind, millis, watch.readyzMillis, watch.metricMillis);
            detections.add(d);
            note(String.format(
                    "%s %s: /readyz showed it after %d ms, a metric after %d ms (-1: not during the cut)",
                    cutKind, target, d.readyzMillis(), d.metricMillis()));
        }
        return new Injected(kind, target, injected, healed);
    }

    /** Sleeps until {@code until} (nanoTime), polling what the cut part reports, if any, every 250 ms. */
    private static void watch(CutWatch watch, long until, long injected) throws InterruptedException {
        while (System.nanoTime() < until) {
            watch.poll(injected);
            long left = (until - System.nanoTime()) / 1_000_000;
            if (left > 0) {
                Thread.sleep(Math.min(250, left));
            }
        }
    }

    /**
     * What a cut part says about its cut: a node's {@code /readyz} fails and {@code watchfanout_cache_ready} is 0
     * (a stale feed); an ingester's {@code /readyz} gives a reason other than a standby's, and
     * {@code watchfanout_ingester_dependency_up} of the cut dependency is 0 (or, for the one that published at the
     * cut, {@code watchfanout_ingester_ready} is 0).
     */
    private static final class CutWatch {
        /** The cut part, null for a watcher's connection. */
        final ChaosStack.JavaPart part;

        final Net net;
        final boolean leader;
        final ChaosWorkload workload;
        final List<ChaosWatcher> ws;
        /** Markers written during the cut and not yet at every watcher: revision, nanoTime written. */
        final List<long[]> markers = new ArrayList<>();

        long readyzMillis = -1;
        long metricMillis = -1;
        long longestWait;
        long lastMarker;

        CutWatch(ChaosStack.JavaPart part, Net net, boolean leader, ChaosWorkload workload, List<ChaosWatcher> ws) {
            this.part = part;
            this.net = net;
            this.leader = leader;
            this.workload = workload;
            this.ws = ws;
        }

        /**
         * The longest time a marker written during the cut (one a second) waited for its last watcher, counting
         * those not there at {@code healed} up to then: how long the cut held the watchers up while it lasted.
         */
        long longestWait(long healed) {
            deliver(healed);
            for (long[] m : markers) {
                longestWait = Math.max(longestWait, (healed - m[1]) / 1_000_000);
            }
            return longestWait;
        }

        private void deliver(long now) {
            long least = Long.MAX_VALUE;
            for (ChaosWatcher w : ws) {
                least = Math.min(least, w.committed());
            }
            for (Iterator<long[]> i = markers.iterator(); i.hasNext(); ) {
                long[] m = i.next();
                if (m[0] <= least) {
                    longestWait = Math.max(longestWait, (now - m[1]) / 1_000_000);
                    i.remove();
                }
            }
        }

        void poll(long injected) throws InterruptedException {
            long now = System.nanoTime();
            deliver(now);
            if (now - lastMarker >= 1_000_000_000L) {
                lastMarker = now;
                long rev = workload.mark(1000);
                if (rev > 0) {
                    markers.add(new long[] {rev, now});
                }
            }
            if (part == null) {
                return;
            }
            long at = (System.nanoTime() - injected) / 1_000_000;
            String base = "http://127.0.0.1:" + part.port;
            if (readyzMillis < 0) {
                String r = ChaosStack.probe(base + "/readyz", false);
                if (!r.isEmpty() && r.startsWith("HTTP") && !r.contains("standby: another replica leads")) {
                    readyzMillis = at;
                }
            }
            if (metricMillis < 0) {
                String text = ChaosStack.body(base + "/metrics");
                if (text != null && shows(text)) {
                    metricMillis = at;
                }
            }
        }

        private boolean shows(String text) {
            if (part.kind == Kind.NODE) {
                return MetricsText.sum(text, "watchfanout_cache_ready", "") == 0;
            }
            String dependency = net == Net.ETCD ? "etcd" : "kafka";
            return MetricsText.sum(text, "watchfanout_ingester_dependency_up", "dependency=\"" + dependency + "\"") == 0
                    || (leader && MetricsText.sum(text, "watchfanout_ingester_ready", "") == 0);
        }
    }

    /** "" when the nodes hold exactly one watch stream per watcher, else how many they hold. */
    private static String streamsNotReleased(ChaosStack stack, int watchers) {
        long open = stack.openStreams();
        return open == watchers ? "" : "nodes hold " + open + " watch streams for " + watchers + " watchers";
    }

    /** A check with no fault before it: the tier caught up with the workload and ready (the final checks). */
    private Outcome finalCheck(
            ChaosStack stack, ChaosWorkload workload, List<ChaosWatcher> ws, int n, Map<String, Integer> exits)
            throws InterruptedException {
        long now = System.nanoTime();
        return recover(stack, workload, ws, n, "none (final)", "-", now, now, exits, () -> "");
    }

    /**
     * Waits until the tier is ready and every watcher received a marker written after {@code healed}; also notes when
     * the watchers alone had it (the stall since {@code injected}).
     */
    private Outcome recover(
            ChaosStack stack,
            ChaosWorkload workload,
            List<ChaosWatcher> ws,
            int n,
            String kind,
            String target,
            long injected,
            long healed,
            Map<String, Integer> exits,
            Supplier<String> alsoNotReady)
            throws InterruptedException {
        long deadline = healed + recoveryTimeout.toNanos();
        long marker = workload.mark(recoveryTimeout.toMillis());
        String notReady = "";
        List<ChaosWatcher> behind = List.of();
        long stall = -1;
        while (marker > 0) {
            supervise(stack, exits);
            notReady = stack.notReady();
            if (notReady.isEmpty()) {
                notReady = alsoNotReady.get();
            }
            behind = new ArrayList<>();
            for (ChaosWatcher w : ws) {
                if (w.committed() < marker) {
                    behind.add(w);
                }
            }
            if (behind.isEmpty() && stall < 0) {
                stall = (System.nanoTime() - injected) / 1_000_000;
            }
            if (notReady.isEmpty() && behind.isEmpty()) {
                long ms = (System.nanoTime() - healed) / 1_000_000;
                Outcome o = new Outcome(n, kind, target, ms, stall, false, "");
                note(String.format(
                        "#%d %s %s: recovered in %d ms, watchers stalled %d ms (marker revision %d)",
                        n, kind, target, ms, stall, marker));
                progress(n, o);
                return o;
            }
            if (System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(100);
        }
        StringBuilder why = new StringBuilder();
        if (marker < 0) {
            why.append("etcd took no write within ")
                    .append(recoveryTimeout.toMillis())
                    .append(" ms; ");
        }
        if (!notReady.isEmpty()) {
            why.append("not ready: ").append(notReady).append("; ");
        }
        if (!behind.isEmpty()) {
            why.append(behind.size())
                    .append(" watchers below marker revision ")
                    .append(marker)
                    .append(": ");
            for (ChaosWatcher w : behind.subList(0, Math.min(5, behind.size()))) {
                why.append("[watcher-")
                        .append(w.id())
                        .append(" at ")
                        .append(w.committed())
                        .append(", ")
                        .append(w.state())
                        .append("] ");
            }
        }
        long ms = (System.nanoTime() - healed) / 1_000_000;
        Outcome o = new Outcome(n, kind, target, ms, stall, true, why.toString().trim());
        note(String.format("#%d %s %s: STUCK after %d ms: %s", n, kind, target, ms, o.detail));
        log("STUCK: #" + n + " " + kind + " " + target + ": " + o.detail);
        return o;
    }

    /** Starts again a part that exited by itself, as a process supervisor would, and counts it. */
    private void supervise(ChaosStack stack, Map<String, Integer> exits) {
        for (Part p : stack.parts()) {
            if (!p.alive()) {
                String what = p.name + " exited by itself" + exitCode(p);
                exits.merge(p.name + " exited by itself" + exitCode(p), 1, Integer::sum);
                note("supervisor: " + what + "; starting it again");
                log("supervisor: " + what + "; starting it again");
                try {
                    p.start();
                } catch (RuntimeException e) {
                    note("supervisor: starting " + p.name + " failed: " + e);
                }
            }
        }
    }

    private static String exitCode(Part p) {
        if (p instanceof ChaosStack.JavaPart j) {
            return j.exitCode();
        }
        return "";
    }

    private List<Choice> menu(ChaosStack stack) {
        List<Choice> menu = new ArrayList<>();
        for (Part p : stack.parts()) {
            for (Action a : List.of(Action.SIGKILL, Action.SIGTERM, Action.SIGSTOP)) {
                menu.add(new Choice(a, p));
            }
        }
        menu.add(new Choice(Action.VANISH, null));
        menu.add(new Choice(Action.STALL, null));
        if (cuts != null) {
            for (Part p : stack.ingesters()) {
                menu.add(new Choice(Action.CUT, p, Net.ETCD));
                if (brokers > 1) {
                    menu.add(new Choice(Action.CUT, p, Net.ONE_BROKER));
                }
                menu.add(new Choice(Action.CUT, p, Net.ALL_BROKERS));
            }
            for (Part p : stack.nodes()) {
                menu.add(new Choice(Action.CUT, p, Net.KAFKA));
            }
            menu.add(new Choice(Action.CUT, null, Net.CLIENT));
        }
        if (only != null) {
            Pattern p = Pattern.compile(only);
            menu.removeIf(c -> !p.matcher(onlyText(c)).find());
            if (menu.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--only " + only + " matches no fault");
            }
        }
        return menu;
    }

    private static String kindName(Action a) {
        return switch (a) {
            case SIGKILL -> "SIGKILL";
            case SIGTERM -> "SIGTERM";
            case SIGSTOP -> "SIGSTOP+SIGCONT";
            case VANISH -> "client vanishes";
            case STALL -> "reader stalls";
            case CUT -> "cut";
        };
    }

    /** What --only matches: the kind without roles, the part's name and its kind ("cut ingester from etcd ingester-1"). */
    private static String onlyText(Choice c) {
        if (c.action == Action.CUT) {
            return c.part == null ? cutName(c.net, "") : cutName(c.net, "") + " " + c.part.name;
        }
        return kindName(c.action) + " "
                + (c.part == null ? "" : c.part.name + " " + c.part.kind.name().toLowerCase(Locale.ROOT));
    }

    /** The name of a cut's kind, the part's role after its kind. */
    private static String cutName(Net net, String role) {
        return switch (net) {
            case ETCD -> "cut ingester" + role + " from etcd";
            case ONE_BROKER -> "cut ingester" + role + " from one broker";
            case ALL_BROKERS -> "cut ingester" + role + " from all brokers";
            case KAFKA -> "cut node from all brokers";
            case CLIENT -> "cut client silently";
        };
    }

    private static String kind(ChaosStack stack, Choice c) {
        if (c.action == Action.CUT) {
            String role = c.part != null && c.part.kind == Kind.INGESTER
                    ? (stack.isLeader(c.part) ? " (leader)" : " (standby)")
                    : "";
            return cutName(c.net, role);
        }
        if (c.part == null) {
            return kindName(c.action);
        }
        String role = "";
        if (c.part.kind == Kind.INGESTER) {
            role = stack.isLeader(c.part) ? " (leader)" : " (standby)";
        } else if (c.part.kind == Kind.KAFKA) {
            String leader = stack.eventsLeader();
            role = leader == null ? "" : leader.equals(c.part.name) ? " (events leader)" : " (follower)";
        }
        return kindName(c.action) + " " + c.part.kind.name().toLowerCase(Locale.ROOT) + role;
    }

    // ---- verification and report ---------------------------------------------------------------

    private int report(
            ChaosStack stack,
            Client client,
            List<ChaosWatcher> ws,
            ChaosWorkload workload,
            List<Outcome> outcomes,
            Map<String, Integer> exits,
            long startRev,
            long endRev,
            long s)
            throws Exception {
        List<Ev> history = etcdHistory(client, startRev, endRev);
        TopicCheck topic = readTopic(stack.bootstrapServers(), startRev, endRev);
        List<Ev> topicExpected = new ArrayList<>(history);
        Result topicResult = Verifier.compare("events topic", topicExpected, topic.events);

        Result watcherResult = Result.empty();
        long relists = 0;
        long relistMismatches = 0;
        long reconnects = 0;
        long expired = 0;
        long regressions = 0;
        List<String> relistProblems = new ArrayList<>();
        for (ChaosWatcher w : ws) {
            List<Ev> expected =
                    Verifier.expectedFor(history, PREFIX, w.start(), Math.min(w.committed(), endRev), w.gaps());
            List<Ev> got = new ArrayList<>();
            for (Ev e : w.received()) {
                if (e.revision() <= endRev) {
                    got.add(e);
                }
            }
            watcherResult = watcherResult.plus(Verifier.compare("watcher-" + w.id(), expected, got));
            relists += w.relists().size();
            reconnects += w.reconnects();
            expired += w.expiredAnswers();
            regressions += w.regressions();
            for (ChaosWatcher.Relist r : w.relists()) {
                String diff = compareList(client, r);
                if (!diff.isEmpty()) {
                    relistMismatches++;
                    if (relistProblems.size() < 5) {
                        relistProblems.add("watcher-" + w.id() + " list at " + r.revision() + ": " + diff);
                    }
                }
            }
        }
        List<Outcome> stuck = outcomes.stream().filter(Outcome::stuck).toList();
        long elapsed = (System.nanoTime() - started) / 1_000_000_000L;

        out.println();
        out.printf(
                "chaos run: seed %d, Kafka brokers %d, %d watchers, %s ops/s, %d faults in %dm%02ds%n",
                s,
                brokers,
                watchers,
                fmt(rate),
                outcomes.stream().filter(o -> o.n > 0 && o.n <= faults).count(),
                elapsed / 60,
                elapsed % 60);
        out.println();
        out.println("faults by kind                                           count   recovery median     p99     max"
                + "   stall median     max   stuck");
        Map<String, List<Outcome>> byKind = new TreeMap<>();
        for (Outcome o : outcomes) {
            byKind.computeIfAbsent(o.kind, k -> new ArrayList<>()).add(o);
        }
        for (Map.Entry<String, List<Outcome>> e : byKind.entrySet()) {
            List<Long> times = new ArrayList<>();
            List<Long> stalls = new ArrayList<>();
            long st = 0;
            for (Outcome o : e.getValue()) {
                if (o.stuck) {
                    st++;
                } else {
                    times.add(o.recoveryMillis);
                }
                if (o.stallMillis >= 0) {
                    stalls.add(o.stallMillis);
                }
            }
            out.printf(
                    "  %-54s %5d   %15s %7s %7s   %12s %7s   %5d%n",
                    e.getKey(),
                    e.getValue().size(),
                    median(times),
                    Percentiles.secs(times, 99),
                    max(times),
                    median(stalls),
                    max(stalls),
                    st);
        }
        List<Long> brokerKills = outcomes.stream()
                .filter(o -> o.kind.startsWith("SIGKILL kafka") && o.stallMillis >= 0)
                .map(Outcome::stallMillis)
                .toList();
        long brokerKillCount = outcomes.stream()
                .filter(o -> o.kind.startsWith("SIGKILL kafka"))
                .count();
        out.printf(
                "broker SIGKILLs: %d; watchers' stall median %s, max %s%n",
                brokerKillCount, median(brokerKills), max(brokerKills));
        List<Long> allRecoveries = outcomes.stream()
                .filter(o -> !o.stuck && o.n > 0 && o.n <= faults)
                .map(Outcome::recoveryMillis)
                .toList();
        out.printf(
                "all faults: recovery median %s, p99 %s, max %s%n",
                median(allRecoveries), Percentiles.secs(allRecoveries, 99), max(allRecoveries));
        if (!cutWaits.isEmpty()) {
            out.println();
            out.println(
                    "network cuts: the watchers' longest wait while the cut lasted (a marker written every second)");
            out.println("  kind                                                    cuts   median     max");
            cutWaits.forEach((k, v) -> out.printf("  %-54s %5d  %7s %7s%n", k, v.size(), median(v), max(v)));
        }
        if (!detections.isEmpty()) {
            out.println();
            out.printf(
                    "network cuts longer than %d s: what the cut part reported (from the cut)%n",
                    DETECTION_BOUND_MILLIS / 1000);
            out.println("  kind                                                    cuts   /readyz  median     max"
                    + "   metric  median     max");
            Map<String, List<Detection>> byCut = new TreeMap<>();
            for (Detection d : detections) {
                byCut.computeIfAbsent(d.kind(), k -> new ArrayList<>()).add(d);
            }
            for (Map.Entry<String, List<Detection>> e : byCut.entrySet()) {
                List<Long> readyz = new ArrayList<>();
                List<Long> metric = new ArrayList<>();
                for (Detection d : e.getValue()) {
                    if (d.readyzMillis() >= 0) {
                        readyz.add(d.readyzMillis());
                    }
                    if (d.metricMillis() >= 0) {
                        metric.add(d.metricMillis());
                    }
                }
                out.printf(
                        "  %-54s %5d   %7d %7s %7s   %6d %7s %7s%n",
                        e.getKey(),
                        e.getValue().size(),
                        readyz.size(),
                        median(readyz),
                        max(readyz),
                        metric.size(),
                        median(metric),
                        max(metric));
            }
        }
        out.println();
        out.printf(
                "workload: %d operations acknowledged, %d failed or timed out (%s)%n",
                workload.ok(), workload.failed(), workload.mix());
        long chaosEvents =
                history.stream().filter(e -> e.key().startsWith(PREFIX)).count();
        out.printf(
                "events written: %d etcd events in revisions (%d, %d], %d of them under %s%n",
                history.size(), startRev, endRev, chaosEvents, PREFIX);
        out.printf(
                "events topic: %d records, %d events checked: lost %d, duplicated %d, unexpected %d, out of order %d;"
                        + " revision chain breaks %d, resyncs %d%n",
                topic.records,
                topicResult.received(),
                topicResult.lost(),
                topicResult.duplicated(),
                topicResult.unexpected(),
                topicResult.outOfOrder(),
                topic.chainBreaks.size(),
                topic.resyncs);
        out.printf(
                "watchers: %d deliveries (expected %d): lost %d, duplicated %d, unexpected %d, out of order %d%n",
                watcherResult.received(),
                watcherResult.expected(),
                watcherResult.lost(),
                watcherResult.duplicated(),
                watcherResult.unexpected(),
                watcherResult.outOfOrder());
        out.printf(
                "  resumes %d, 410 answers %d, relists %d (lists that differ from etcd: %d), frames at or below the"
                        + " resume point %d%n",
                reconnects, expired, relists, relistMismatches, regressions);
        out.printf("stuck: %d%n", stuck.size());
        for (Outcome o : stuck) {
            out.printf("  #%d %s %s: %s%n", o.n, o.kind, o.target, o.detail);
        }
        if (!exits.isEmpty()) {
            out.println("parts that exited by themselves (started again by the supervisor):");
            exits.forEach((k, v) -> out.printf("  %s: %d%n", k, v));
        }
        List<String> examples = new ArrayList<>(topicResult.examples());
        examples.addAll(topic.chainBreaks.subList(0, Math.min(5, topic.chainBreaks.size())));
        examples.addAll(watcherResult.examples());
        examples.addAll(relistProblems);
        if (!examples.isEmpty()) {
            out.println("examples:");
            examples.forEach(x -> out.println("  " + x));
        }
        boolean ok = topicResult.ok()
                && topic.chainBreaks.isEmpty()
                && watcherResult.ok()
                && stuck.isEmpty()
                && relistMismatches == 0;
        out.println();
        out.println(
                ok
                        ? "verdict: OK: nothing lost, duplicated or stuck"
                        : "verdict: FAILED (seed " + s + "; fault log " + faultLog + ")");
        return ok ? 0 : 1;
    }

    private static String median(List<Long> millis) {
        List<Long> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        return sorted.isEmpty() ? "-" : secs(sorted.get((sorted.size() - 1) / 2));
    }

    private static String max(List<Long> millis) {
        return millis.isEmpty() ? "-" : secs(Collections.max(millis));
    }

    private static String compareList(Client client, ChaosWatcher.Relist r) throws Exception {
        List<KeyValue> kvs = client.getKVClient()
                .get(
                        ByteSequence.from(PREFIX, StandardCharsets.UTF_8),
                        GetOption.builder()
                                .isPrefix(true)
                                .withRevision(r.revision())
                                .build())
                .get(30, TimeUnit.SECONDS)
                .getKvs();
        Map<String, Integer> want = new HashMap<>();
        for (KeyValue kv : kvs) {
            want.put(
                    kv.getKey().toString(StandardCharsets.UTF_8),
                    com.google.protobuf.ByteString.copyFrom(kv.getValue().getBytes())
                            .hashCode());
        }
        if (want.equals(r.kvs())) {
            return "";
        }
        return want.size() + " keys in etcd, " + r.kvs().size() + " listed";
    }

    /** etcd's events in (from, to], every key, read back with a watch from {@code from + 1}. */
    private static List<Ev> etcdHistory(Client client, long from, long to) throws Exception {
        List<Ev> events = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(1);
        Throwable[] error = new Throwable[1];
        ByteSequence zero = ByteSequence.from(new byte[] {0});
        var watcher = client.getWatchClient()
                .watch(
                        zero,
                        WatchOption.builder()
                                .withRange(zero)
                                .withRevision(from + 1)
                                .build(),
                        response -> {
                            for (WatchEvent e : response.getEvents()) {
                                KeyValue kv = e.getKeyValue();
                                long rev = kv.getModRevision();
                                if (rev > to) {
                                    done.countDown();
                                    return;
                                }
                                int type;
                                int hash = 0;
                                if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                    type = Verifier.DELETED;
                                } else {
                                    type = kv.getVersion() == 1 ? Verifier.ADDED : Verifier.MODIFIED;
                                    hash = com.google.protobuf.ByteString.copyFrom(
                                                    kv.getValue().getBytes())
                                            .hashCode();
                                }
                                events.add(new Ev(
                                        rev,
                                        ChaosWatcher.key(com.google.protobuf.ByteString.copyFrom(
                                                kv.getKey().getBytes())),
                                        type,
                                        hash));
                                if (rev == to) {
                                    // the last revision may hold several events: wait for the end of this response
                                    done.countDown();
                                }
                            }
                        },
                        t -> {
                            error[0] = t;
                            done.countDown();
                        });
        try {
            if (!done.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("etcd's history up to " + to + " did not arrive within 120 s");
            }
            Thread.sleep(500);
            if (error[0] != null) {
                throw new IllegalStateException("reading etcd's history: " + error[0], error[0]);
            }
        } finally {
            watcher.close();
        }
        synchronized (events) {
            List<Ev> out = new ArrayList<>();
            for (Ev e : events) {
                if (e.revision() <= to) {
                    out.add(e);
                }
            }
            return out;
        }
    }

    /** The events topic, read_committed, from its beginning. */
    private static final class TopicCheck {
        final List<Ev> events = new ArrayList<>();
        final List<String> chainBreaks = new ArrayList<>();
        long records;
        long resyncs;
    }

    private static TopicCheck readTopic(String bootstrap, long from, long to) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 16 << 20);
        TopicCheck check = new TopicCheck();
        TopicPartition tp = new TopicPartition(ChaosStack.TOPIC_PREFIX + ".events", 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
            RevisionChain chain = new RevisionChain();
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (consumer.position(tp, Duration.ofSeconds(30)) < end) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("reading the events topic: not at its end within 5 minutes");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
                    check.records++;
                    EventsRecord rec;
                    try {
                        rec = EventsRecord.parseFrom(r.value());
                    } catch (IOException e) {
                        throw new UncheckedIOException("offset " + r.offset() + ": not an EventsRecord", e);
                    }
                    try {
                        chain.accept(rec);
                    } catch (RevisionChainException e) {
                        check.chainBreaks.add("events topic offset " + r.offset() + ": " + e.getMessage());
                        chain = new RevisionChain();
                    }
                    if (rec.hasResync()) {
                        if (rec.getResync().getRevision() > from) {
                            check.resyncs++;
                        }
                        continue;
                    }
                    if (!rec.hasEvent()) {
                        continue;
                    }
                    Event e = rec.getEvent();
                    if (e.getResync() || e.getRevision() <= from || e.getRevision() > to) {
                        continue;
                    }
                    int type;
                    int hash = 0;
                    if (e.getType() == Event.Type.DELETE) {
                        type = Verifier.DELETED;
                    } else {
                        type = e.getKv().getVersion() == 1 ? Verifier.ADDED : Verifier.MODIFIED;
                        hash = e.getKv().getValue().hashCode();
                    }
                    check.events.add(
                            new Ev(e.getRevision(), ChaosWatcher.key(e.getKv().getKey()), type, hash));
                }
            }
        }
        return check;
    }

    // ---- output ---------------------------------------------------------------------------------

    private void check() {
        if (faults < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--faults: " + faults + " (expected: >= 0)");
        }
        if (brokers != 1 && brokers != 3) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--kafka-brokers: " + brokers + " (expected: 1 or 3)");
        }
        if (watchers < 1) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--watchers: " + watchers + " (expected: >= 1)");
        }
        if (!(rate > 0) || rate > 10_000) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--rate: " + rate + " (expected: 0 < rate <= 10000)");
        }
        if (longCutTime.toMillis() < 12_000) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--long-cut-time: " + longCutTime + " (expected: >= 12s)");
        }
        if (!(longCuts >= 0 && longCuts <= 1) || !(overlap >= 0 && overlap <= 1)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--long-cuts, --overlap: " + longCuts + ", " + overlap + " (expected: 0..1)");
        }
        if (maxFaultTime.toMillis() < 500) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--max-fault-time: " + maxFaultTime + " (expected: >= 500ms)");
        }
    }

    private void progress(int n, Outcome o) {
        if (n > 0) {
            log(String.format("#%d/%d %s %s: recovered in %s", n, faults, o.kind, o.target, secs(o.recoveryMillis)));
        }
    }

    private void log(String text) {
        System.err.printf("[%5.0fs] %s%n", (System.nanoTime() - started) / 1e9, text);
    }

    private synchronized void note(String line) {
        try {
            Files.writeString(
                    faultLog,
                    LocalDateTime.now() + " " + line + System.lineSeparator(),
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            log("cannot write " + faultLog + ": " + e);
        }
    }

    private static String secs(long millis) {
        return String.format("%.1f s", millis / 1000.0);
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
