package io.watchfanout.testkit;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registry of every child process the testkit started, with a JVM shutdown hook (the reaper)
 * that kills (SIGKILL) those still alive, and their descendants, when the JVM exits — so that a
 * test JVM leaves no etcd or Kafka behind even when a test forgot to close its server.
 *
 * <p>A long-running program that owns its children (the local stack) has three knobs, all off
 * by default:
 * <ul>
 *   <li>{@link #runBeforeReaping(Runnable)}: the reaper first runs a graceful, ordered stop,
 *       then kills only what is left. (JVM shutdown hooks run concurrently and in no defined
 *       order, so a second hook of the program's own would race with the reaper's SIGKILL.)</li>
 *   <li>{@link #startInOwnSession(boolean)}: each child becomes the leader of a session of its
 *       own ({@code setsid}), so that Ctrl-C in a terminal — SIGINT to the whole foreground
 *       process group — reaches only this JVM, whose shutdown stops the children in order,
 *       instead of every child at once.</li>
 *   <li>{@link #stopWhenThisJvmDies(boolean)}: each child is started behind a small shell
 *       watchdog that stops it (SIGTERM, then SIGKILL) when this JVM dies without stopping it —
 *       SIGKILL, an OOM kill — when no shutdown hook runs and the reaper cannot help.</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class ChildProcesses {
    private static final Logger LOG = LoggerFactory.getLogger(ChildProcesses.class);
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
    private static final List<Runnable> BEFORE_REAPING = new CopyOnWriteArrayList<>();
    private static volatile boolean ownSession;
    private static volatile int orphanGraceSeconds; // 0: no watchdog
    private static boolean hookInstalled; // guarded by ChildProcesses.class
    private static String setsidPath; // guarded by ChildProcesses.class; "" when missing

    private ChildProcesses() {}

    /**
     * Runs {@code action} in the reaper's shutdown hook, before it kills the children still
     * alive: the place for a graceful stop of the children in the right order. Actions run in
     * the order they were added; an exception of one is logged and the next runs.
     *
     * @param action e.g. a method that stops the children with SIGTERM and waits for them;
     *     it must return in bounded time (the JVM waits for it)
     */
    public static void runBeforeReaping(Runnable action) {
        BEFORE_REAPING.add(Objects.requireNonNull(action, "action"));
        installHook();
    }

    /**
     * Whether children started from now on are made leaders of their own session (and process
     * group) with the {@code setsid} program (util-linux), so that a signal to this JVM's
     * process group (Ctrl-C, SIGINT) does not reach them. The child's pid stays the one
     * {@link Process#pid()} reports ({@code setsid} executes the command in place). Where
     * {@code setsid} is not on {@code PATH}, children are started as usual and a warning is
     * logged once.
     *
     * @param enabled true to start children in their own session; default false
     */
    public static void startInOwnSession(boolean enabled) {
        ownSession = enabled;
    }

    /**
     * Whether children started from now on stop when this JVM dies without stopping them
     * (SIGKILL, the kernel's OOM killer): a child then gets SIGTERM, and SIGKILL if it is
     * still alive {@code graceSeconds} later.
     *
     * <p>How: Linux offers no portable way for Java to ask for a signal on its parent's death
     * ({@code prctl(PR_SET_PDEATHSIG)} needs native code), and a child that polls whether its
     * parent is alive needs code of ours in every child, which etcd and Kafka are not. So each
     * child is started as {@code sh -c WATCHDOG GRACE COMMAND...}: the shell forks a watchdog,
     * then {@code exec}s the command in place (the child's pid stays the one
     * {@link Process#pid()} reports, its stdin becomes {@code /dev/null}). The watchdog blocks
     * reading the child's stdin pipe, whose only writer is this JVM and which nobody writes:
     * the read ends when this JVM closes the pipe (it does once the child has exited) or when
     * the kernel closes it because this JVM died. The watchdog then stops the child if it still
     * runs — the same process, checked by its start time in {@code /proc}, not a later process
     * that reused the pid — and exits. No polling, nothing to leak: a watchdog lives exactly as
     * long as its child and this JVM both do.
     *
     * @param enabled true to start children with the watchdog; default false
     * @param graceSeconds how long an orphaned child gets between SIGTERM and SIGKILL, {@code >= 1}
     */
    public static void stopWhenThisJvmDies(boolean enabled, int graceSeconds) {
        if (enabled && graceSeconds < 1) {
            throw new IllegalArgumentException("graceSeconds: " + graceSeconds + " (expected: >= 1)");
        }
        orphanGraceSeconds = enabled ? graceSeconds : 0;
    }

    /**
     * Whether {@code process} still runs. Unlike {@link ProcessHandle#isAlive()}, a zombie does not:
     * it has exited and only waits for whoever adopted it (init, or a container's first process,
     * which may reap it seconds later) to reap it; a stopped part's exited watchdog is one.
     *
     * @param process any process, not necessarily a child of this JVM
     * @return false once it exited (reaped or not); on systems without {@code /proc}, as
     *     {@link ProcessHandle#isAlive()}
     */
    public static boolean isRunning(ProcessHandle process) {
        if (!process.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            int end = stat.lastIndexOf(')');
            return end < 0 || end + 2 >= stat.length() || stat.charAt(end + 2) != 'Z';
        } catch (IOException | RuntimeException e) {
            return process.isAlive(); // gone meanwhile, or no /proc: as the handle says
        }
    }

    /** Whether children are started behind the watchdog of {@link #stopWhenThisJvmDies}. */
    static boolean watchdogEnabled() {
        return orphanGraceSeconds > 0;
    }

    /** Tracks {@code process} until it exits. */
    static void register(Process process) {
        installHook();
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
    }

    /**
     * The command to start: {@code command} itself, behind the watchdog when
     * {@link #stopWhenThisJvmDies} is on, prefixed by {@code setsid} when
     * {@link #startInOwnSession(boolean)} is on and the program exists.
     */
    static List<String> launchCommand(List<String> command) {
        List<String> wrapped = new ArrayList<>(command.size() + 6);
        if (ownSession && !setsid().isEmpty()) {
            wrapped.add(setsid());
        }
        int grace = orphanGraceSeconds;
        if (grace > 0) {
            wrapped.addAll(List.of("/bin/sh", "-c", WATCHDOG, "watchfanout-watchdog", Integer.toString(grace)));
        }
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * The shell of {@link #stopWhenThisJvmDies}: {@code $1} is the grace in seconds, the rest the
     * command. POSIX sh (dash); {@code /proc/PID/stat} field 22 is the start time, which tells
     * the child from a later process with the same pid.
     */
    static final String WATCHDOG = String.join(
            "\n",
            "grace=$1; shift",
            "started() {",
            "  { read -r s </proc/\"$1\"/stat; } 2>/dev/null || return 1",
            "  s=${s##*') '}; set -- $s; echo \"${20}\"",
            "}",
            "child=$$; birth=$(started $$)",
            "alive() { [ \"$(started \"$child\")\" = \"$birth\" ] && kill -0 \"$child\" 2>/dev/null; }",
            "exec 3<&0",
            "(",
            "  trap '' HUP INT TERM",
            "  while read -r _ <&3; do :; done",
            "  exec 3<&-",
            "  if alive; then",
            "    echo \"watchfanout-watchdog: the process that started pid $child is gone;"
                    + " stopping $child (SIGTERM, SIGKILL after $grace s)\" >&2",
            "    kill -TERM \"$child\" 2>/dev/null; i=0",
            "    while alive && [ \"$i\" -lt \"$grace\" ]; do sleep 1; i=$((i + 1)); done",
            "    if alive; then kill -KILL \"$child\" 2>/dev/null; fi",
            "  fi",
            ") &",
            "exec \"$@\" </dev/null 3<&-");

    private static synchronized String setsid() {
        if (setsidPath == null) {
            setsidPath = "";
            String path = Objects.requireNonNullElse(System.getenv("PATH"), "");
            for (String dir : path.split(File.pathSeparator)) {
                Path candidate = Path.of(dir.isEmpty() ? "." : dir, "setsid");
                if (Files.isExecutable(candidate)) {
                    setsidPath = candidate.toAbsolutePath().toString();
                    break;
                }
            }
            if (setsidPath.isEmpty()) {
                LOG.warn(
                        "'setsid' not found on PATH ({}): children share this JVM's process group, so"
                                + " Ctrl-C reaches them directly (install util-linux to avoid it)",
                        path);
            }
        }
        return setsidPath;
    }

    private static synchronized void installHook() {
        if (!hookInstalled) {
            Runtime.getRuntime().addShutdownHook(new Thread(ChildProcesses::reap, "testkit-child-reaper"));
            hookInstalled = true;
        }
    }

    private static void reap() {
        for (Runnable action : BEFORE_REAPING) {
            try {
                action.run();
            } catch (RuntimeException | Error e) {
                LOG.error("shutdown action {} failed; killing the remaining children", action, e);
            }
        }
        killAll();
    }

    private static void killAll() {
        for (Process process : LIVE) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        for (Process process : LIVE) {
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
