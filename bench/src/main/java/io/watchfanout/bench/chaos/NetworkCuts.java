package io.watchfanout.bench.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Silent network cuts between the tier's processes on loopback, with iptables: packets are dropped
 * both ways, so that the ends see neither a FIN nor a reset, as behind a broken switch. Every
 * ingester and fan-out node runs in a cgroup v2 directory of its own ({@link #adopt}, after each
 * start); a cut of a part from a server port marks that part's connections to the port (a
 * {@code CONNMARK} in {@code OUTPUT}, matched by the part's cgroup) and drops, in {@code INPUT},
 * every packet of a marked connection to or from that port: the part's requests and the server's
 * answers. Dropping on input rather than output keeps the sender unaware: a new {@code connect()}
 * hangs instead of failing at once with {@code EPERM}, as it would behind a real partition. A
 * watcher's connection (in the fault run's own JVM) is cut by its two port numbers.
 *
 * <p>All rules of a run live in two chains of its own ({@link #chainIn}, {@link #chainOut}),
 * jumped to from the top of {@code INPUT} and {@code OUTPUT}; {@link #close()} (also from a
 * shutdown hook) flushes and deletes them and removes the run's cgroups, so an interrupted run
 * leaves no rule behind.
 *
 * <p>Needs root, iptables with the {@code cgroup} and {@code connmark} matches, and a mounted
 * cgroup2 hierarchy; {@link #open} says why not when they are missing. Thread-safety: every method
 * is synchronized.
 */
final class NetworkCuts implements AutoCloseable {
    /** The cgroup directory of each part is {@code <cgroup2 root>/<GROUP_PREFIX><run>/<part>}. */
    static final String GROUP_PREFIX = "watchfanout-chaos-";

    private static final int MARK_BASE = 0x57460000;

    private final String run;
    private final Path cgroupRoot;
    private final Consumer<String> log;
    private final Map<String, Integer> marks = new LinkedHashMap<>();
    private final List<Cut> active = new ArrayList<>();
    private final Thread hook = new Thread(this::close, "network-cuts-cleanup");
    private boolean closed;

    private NetworkCuts(String run, Path cgroupRoot, Consumer<String> log) {
        this.run = run;
        this.cgroupRoot = cgroupRoot;
        this.log = log;
    }

    /** One cut in place: the rules it added, removed by {@link #heal}. */
    final class Cut {
        private final List<List<String>> rules;
        private boolean healed;

        private Cut(List<List<String>> rules) {
            this.rules = rules;
        }

        /** Removes the cut's rules; the connections carry on, or time out, as their ends decide. Idempotent. */
        void heal() {
            synchronized (NetworkCuts.this) {
                if (healed || closed) {
                    healed = true;
                    return;
                }
                healed = true;
                active.remove(this);
                for (List<String> r : rules) {
                    List<String> delete = new ArrayList<>(r);
                    delete.set(0, "-D");
                    iptables(delete, true);
                }
            }
        }
    }

    /**
     * Sets up the run's chains and cgroup directory, checking on the way that iptables takes the
     * rules a cut needs.
     *
     * @param run a short name of the run, letters and digits, at most 8 characters (the chains'
     *     names must stay under 29)
     * @throws Unavailable saying why network faults cannot run here
     */
    static NetworkCuts open(String run, Consumer<String> log) throws Unavailable {
        Path root = cgroup2Root();
        if (root == null) {
            throw new Unavailable("no cgroup2 hierarchy is mounted (/proc/self/mounts)");
        }
        NetworkCuts cuts = new NetworkCuts(run, root, log);
        try {
            Files.createDirectories(cuts.groupDir());
        } catch (IOException | RuntimeException e) {
            throw new Unavailable("cannot create " + cuts.groupDir() + ": " + e.getMessage());
        }
        String problem = cuts.setUp();
        if (!problem.isEmpty()) {
            cuts.close();
            throw new Unavailable(problem);
        }
        Runtime.getRuntime().addShutdownHook(cuts.hook);
        return cuts;
    }

    /** Why network faults cannot be injected on this machine (the message says). */
    static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String reason) {
            super(reason);
        }
    }

    String chainIn() {
        return "wfchaos-" + run + "-in";
    }

    String chainOut() {
        return "wfchaos-" + run + "-out";
    }

    private Path groupDir() {
        return cgroupRoot.resolve(GROUP_PREFIX + run);
    }

    /** The part's cgroup path relative to the cgroup2 root, as iptables' {@code --path} takes it. */
    String groupPath(String part) {
        return GROUP_PREFIX + run + "/" + part;
    }

    private String setUp() {
        for (String chain : List.of(chainIn(), chainOut())) {
            String e = iptables(List.of("-N", chain), false);
            if (!e.isEmpty()) {
                return "iptables -N " + chain + ": " + e;
            }
        }
        String e = iptables(List.of("-I", "INPUT", "1", "-j", chainIn()), false);
        if (e.isEmpty()) {
            e = iptables(List.of("-I", "OUTPUT", "1", "-j", chainOut()), false);
        }
        if (!e.isEmpty()) {
            return "iptables: cannot jump to the run's chains: " + e;
        }
        // the matches a cut uses, tried once on a cgroup of our own
        String part = "probe";
        try {
            Files.createDirectories(cgroupRoot.resolve(groupPath(part)));
        } catch (IOException ex) {
            return "cannot create a cgroup under " + groupDir() + ": " + ex.getMessage();
        }
        marks.put(part, MARK_BASE);
        for (List<String> r : partRules(chainIn(), chainOut(), groupPath(part), MARK_BASE, 1)) {
            e = iptables(r, false);
            if (!e.isEmpty()) {
                return "iptables " + String.join(" ", r) + ": " + e;
            }
            List<String> delete = new ArrayList<>(r);
            delete.set(0, "-D");
            iptables(delete, false);
        }
        return "";
    }

    /**
     * Moves a process into the part's cgroup; call right after it started, before it opens
     * connections (a socket stays in the cgroup it was created in).
     */
    synchronized void adopt(String part, long pid) {
        if (closed) {
            return;
        }
        marks.computeIfAbsent(part, p -> MARK_BASE + marks.size());
        Path dir = cgroupRoot.resolve(groupPath(part));
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("cgroup.procs"), Long.toString(pid), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            log.accept("network cuts: cannot move " + part + " (pid " + pid + ") into " + dir + ": " + e);
        }
    }

    /** Cuts a part (adopted before) from every listed server port, both ways. */
    synchronized Cut cutPart(String part, List<Integer> serverPorts) {
        Integer mark = marks.get(part);
        if (mark == null) {
            throw new IllegalStateException(part + " was never adopted into a cgroup");
        }
        List<List<String>> rules = new ArrayList<>();
        for (int port : serverPorts) {
            rules.addAll(partRules(chainIn(), chainOut(), groupPath(part), mark, port));
        }
        return add(rules);
    }

    /** Cuts one TCP connection on loopback, both ways, by its two ports. */
    synchronized Cut cutConnection(int clientPort, int serverPort) {
        return add(connectionRules(chainIn(), clientPort, serverPort));
    }

    private Cut add(List<List<String>> rules) {
        if (closed) {
            throw new IllegalStateException("network cuts closed");
        }
        Cut cut = new Cut(rules);
        active.add(cut);
        for (List<String> r : rules) {
            String e = iptables(r, false);
            if (!e.isEmpty()) {
                cut.heal();
                throw new IllegalStateException("iptables " + String.join(" ", r) + ": " + e);
            }
        }
        return cut;
    }

    /**
     * The rules that cut the processes of a cgroup from a server port: mark their connections to
     * the port on the way out, drop both directions of marked connections on the way in.
     */
    static List<List<String>> partRules(String chainIn, String chainOut, String groupPath, int mark, int port) {
        String m = "0x" + Integer.toHexString(mark);
        return List.of(
                List.of(
                        "-A",
                        chainOut,
                        "-m",
                        "cgroup",
                        "--path",
                        groupPath,
                        "-p",
                        "tcp",
                        "--dport",
                        Integer.toString(port),
                        "-j",
                        "CONNMARK",
                        "--set-xmark",
                        m + "/0xffffffff"),
                drop(chainIn, "--dport", Integer.toString(port), "-m", "connmark", "--mark", m),
                drop(chainIn, "--sport", Integer.toString(port), "-m", "connmark", "--mark", m));
    }

    /** The rules that drop both directions of one loopback connection. */
    static List<List<String>> connectionRules(String chainIn, int clientPort, int serverPort) {
        return List.of(
                drop(chainIn, "--sport", Integer.toString(clientPort), "--dport", Integer.toString(serverPort)),
                drop(chainIn, "--sport", Integer.toString(serverPort), "--dport", Integer.toString(clientPort)));
    }

    /** {@code -A chain -p tcp <match...> -j DROP}. */
    private static List<String> drop(String chain, String... match) {
        List<String> rule = new ArrayList<>(List.of("-A", chain, "-p", "tcp"));
        rule.addAll(List.of(match));
        rule.addAll(List.of("-j", "DROP"));
        return List.copyOf(rule);
    }

    /** Where the cgroup2 hierarchy is mounted, from the mount table, or null. */
    static Path cgroup2Root() {
        try {
            return cgroup2Root(Files.readAllLines(Path.of("/proc/self/mounts")));
        } catch (IOException e) {
            return null;
        }
    }

    /** The mount point of the first {@code cgroup2} line of a mount table, or null. */
    static Path cgroup2Root(List<String> mounts) {
        for (String line : mounts) {
            String[] f = line.split(" ");
            if (f.length >= 3 && f[2].equals("cgroup2")) {
                return Path.of(f[1]);
            }
        }
        return null;
    }

    /** "" on success, else iptables' message. */
    private String iptables(List<String> args, boolean quiet) {
        List<String> cmd = new ArrayList<>(List.of("iptables", "-w", "5"));
        cmd.addAll(args);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            int code = p.waitFor();
            if (code == 0) {
                return "";
            }
            if (!quiet) {
                return output.isEmpty() ? "exit code " + code : output;
            }
            log.accept("network cuts: iptables " + String.join(" ", args) + ": " + output);
            return output;
        } catch (IOException e) {
            return e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /**
     * Removes every rule and chain of the run and its cgroups (processes still in them go back to
     * the root cgroup). Idempotent; also run by a shutdown hook.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        active.clear();
        iptables(List.of("-D", "INPUT", "-j", chainIn()), false);
        iptables(List.of("-D", "OUTPUT", "-j", chainOut()), false);
        for (String chain : List.of(chainIn(), chainOut())) {
            iptables(List.of("-F", chain), false);
            iptables(List.of("-X", chain), false);
        }
        Path dir = groupDir();
        try (var parts = Files.list(dir)) {
            for (Path p : parts.filter(Files::isDirectory).toList()) {
                try {
                    for (String pid : Files.readAllLines(p.resolve("cgroup.procs"))) {
                        if (!pid.isBlank()) {
                            Files.writeString(cgroupRoot.resolve("cgroup.procs"), pid.strip());
                        }
                    }
                    Files.delete(p);
                } catch (IOException e) {
                    log.accept("network cuts: cannot remove " + p + ": " + e);
                }
            }
            Files.delete(dir);
        } catch (IOException e) {
            log.accept("network cuts: cannot remove " + dir + ": " + e);
        }
        if (Thread.currentThread() != hook) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down
            }
        }
    }
}
