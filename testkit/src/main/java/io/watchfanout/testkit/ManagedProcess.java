package io.watchfanout.testkit;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One child process with stdout and stderr appended to a log file; it can be launched again
 * with the same command after it exited (restart).
 *
 * <p>Thread-safety: launch, kill and stop are serialized on this object; {@link #isAlive()},
 * {@link #pid()} and the log readers may be called from any thread at any time.
 */
final class ManagedProcess {
    private static final Logger LOG = LoggerFactory.getLogger(ManagedProcess.class);
    private static final Duration KILL_WAIT = Duration.ofSeconds(30);

    private final String description;
    private final List<String> command;
    private final Map<String, String> environment;
    private final Path workingDirectory;
    private final Path logFile;
    private static final Duration LEFTOVER_WAIT = Duration.ofSeconds(10);
    /**
     * How often a leftover is looked at. Not {@link ProcessHandle#onExit()}: for a process that is
     * not this JVM's child it polls from 300 ms on, growing, which made every stop take seconds.
     */
    private static final long LEFTOVER_POLL_MILLIS = 10;

    private volatile Process process;
    private volatile long logStartOffset;

    ManagedProcess(
            String description,
            List<String> command,
            Map<String, String> environment,
            Path workingDirectory,
            Path logFile) {
        this.description = description;
        this.command = List.copyOf(command);
        this.environment = environment;
        this.workingDirectory = workingDirectory;
        this.logFile = logFile;
    }

    String description() {
        return description;
    }

    Path logFile() {
        return logFile;
    }

    /**
     * Starts the command. {@code environment} entries with a {@code null} value are removed from
     * the inherited environment.
     *
     * @throws IllegalStateException if it is already running or cannot be started
     */
    synchronized void launch() {
        Process current = process;
        if (current != null && current.isAlive()) {
            throw new IllegalStateException(description + " is already running (pid " + current.pid() + ")");
        }
        try {
            Files.createDirectories(logFile.toAbsolutePath().getParent());
            logStartOffset = Files.exists(logFile) ? Files.size(logFile) : 0;
            Files.writeString(
                    logFile,
                    "==== testkit " + Instant.now() + ": starting " + description + ": " + String.join(" ", command)
                            + System.lineSeparator(),
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write log file " + logFile, e);
        }
        ProcessBuilder builder = new ProcessBuilder(ChildProcesses.launchCommand(command))
                .directory(workingDirectory.toFile())
                .redirectErrorStream(true)
                .redirectOutput(Redirect.appendTo(logFile.toFile()));
        environment.forEach((key, value) -> {
            if (value == null) {
                builder.environment().remove(key);
            } else {
                builder.environment().put(key, value);
            }
        });
        Process started;
        try {
            started = builder.start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot start " + description + " (" + command.get(0) + "): " + e.getMessage(), e);
        }
        ChildProcesses.register(started);
        if (ChildProcesses.watchdogEnabled()) {
            // The watchdog reads this pipe (the command itself gets /dev/null): it stays open while
            // the child runs, so that only this JVM's death, or the child's exit, ends the read.
            started.onExit().thenRun(() -> closeStdin(started));
        } else {
            closeStdin(started); // stdin: end of file
        }
        process = started;
        LOG.info("started {} (pid {}), log {}", description, started.pid(), logFile);
    }

    private void closeStdin(Process p) {
        try {
            p.getOutputStream().close();
        } catch (IOException e) {
            LOG.debug("closing stdin of {} failed", description, e);
        }
    }

    /**
     * After the child exited: lets its watchdog go (closes the pipe it reads) and waits for the
     * processes that were below the child — the watchdog, anything the child started — to exit,
     * killing those still alive after a while, so that a stopped part leaves nothing behind.
     */
    private void awaitLeftovers(Process exited, List<ProcessHandle> below) {
        closeStdin(exited);
        long deadline = System.nanoTime() + LEFTOVER_WAIT.toNanos();
        for (ProcessHandle p : below) {
            try {
                while (ChildProcesses.isRunning(p) && System.nanoTime() < deadline) {
                    Thread.sleep(LEFTOVER_POLL_MILLIS);
                }
            } catch (InterruptedException e) {
                throw interrupted("waiting for the processes below " + description, e);
            }
            if (ChildProcesses.isRunning(p)) {
                LOG.warn(
                        "pid {} (below {}) still alive {} s after it exited; sending SIGKILL",
                        p.pid(),
                        description,
                        LEFTOVER_WAIT.toSeconds());
                p.destroyForcibly();
            }
        }
    }

    boolean isAlive() {
        Process current = process;
        return current != null && current.isAlive();
    }

    /** The pid of the current (or last) process. */
    long pid() {
        Process current = process;
        if (current == null) {
            throw new IllegalStateException(description + " was never started");
        }
        return current.pid();
    }

    /** The exit code of the last process, empty while it runs or if it never started. */
    OptionalInt exitCode() {
        Process current = process;
        if (current == null || current.isAlive()) {
            return OptionalInt.empty();
        }
        return OptionalInt.of(current.exitValue());
    }

    /** Waits up to {@code timeout} for the process to exit; empty if it is still running. */
    OptionalInt waitForExit(Duration timeout) {
        Process current = process;
        if (current == null) {
            return OptionalInt.empty();
        }
        try {
            if (current.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                return OptionalInt.of(current.exitValue());
            }
            return OptionalInt.empty();
        } catch (InterruptedException e) {
            throw interrupted("waiting for " + description + " to exit", e);
        }
    }

    /** SIGKILL to the process and its descendants; waits until it is gone. No-op if not running. */
    synchronized void kill() {
        Process current = process;
        if (current == null || !current.isAlive()) {
            return;
        }
        List<ProcessHandle> below = current.descendants().toList();
        below.forEach(ProcessHandle::destroyForcibly);
        current.toHandle().destroyForcibly(); // as in stop(): the watchdog's pipe stays open until the exit
        if (waitForExit(KILL_WAIT).isEmpty()) {
            throw new IllegalStateException(description + " (pid " + current.pid() + ") still alive "
                    + KILL_WAIT.toSeconds() + " s after SIGKILL");
        }
        awaitLeftovers(current, below);
        LOG.info("killed {} (pid {})", description, current.pid());
    }

    /**
     * SIGTERM, then waits up to {@code timeout}; if the process is still alive then, SIGKILL.
     *
     * @return the exit code, empty if it was never started
     */
    synchronized OptionalInt stop(Duration timeout) {
        Process current = process;
        if (current == null) {
            return OptionalInt.empty();
        }
        if (current.isAlive()) {
            long startNanos = System.nanoTime();
            List<ProcessHandle> below = current.descendants().toList();
            // SIGTERM through the handle: Process.destroy() also closes the pipes, the one its
            // watchdog reads among them, which would take the stop for this JVM's death.
            current.toHandle().destroy();
            if (waitForExit(timeout).isEmpty()) {
                LOG.warn(
                        "{} (pid {}) did not exit within {} ms of SIGTERM; sending SIGKILL. Log: {}",
                        description,
                        current.pid(),
                        timeout.toMillis(),
                        logFile);
                kill();
            } else {
                awaitLeftovers(current, below);
                LOG.info(
                        "stopped {} (pid {}) in {} ms",
                        description,
                        current.pid(),
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
            }
        }
        return OptionalInt.of(current.exitValue());
    }

    /** The last {@code lines} lines of the log file (all of it if shorter); "" if there is none. */
    String logTail(int lines) {
        return tail(logFile, lines);
    }

    /**
     * Waits until a line written since the last launch matches {@code condition}.
     *
     * @return the first matching line
     * @throws IllegalStateException on timeout or if the process exits first, with the log tail
     */
    String awaitLogLine(Predicate<String> condition, String what, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long offset = logStartOffset; // first byte not yet split into complete lines
        while (true) {
            boolean wasAlive = isAlive();
            byte[] fresh = readFrom(logFile, offset);
            int cut = lastNewline(fresh);
            if (cut >= 0) {
                offset += cut + 1;
                for (String line : new String(fresh, 0, cut + 1, StandardCharsets.UTF_8).split("\r?\n")) {
                    if (condition.test(line)) {
                        return line;
                    }
                }
            }
            String unterminated = new String(fresh, cut + 1, fresh.length - cut - 1, StandardCharsets.UTF_8);
            if (!unterminated.isEmpty() && condition.test(unterminated)) {
                return unterminated;
            }
            if (!wasAlive) {
                throw new IllegalStateException(
                        description + " exited (code " + exitCode().orElse(-1) + ") before logging " + what + "; log "
                                + logFile + ", last lines:\n" + logTail(40));
            }
            if (System.nanoTime() >= deadline) {
                throw new IllegalStateException(description + " did not log " + what + " within " + timeout.toMillis()
                        + " ms; log " + logFile + ", last lines:\n" + logTail(40));
            }
            sleep(50);
        }
    }

    private static int lastNewline(byte[] bytes) {
        for (int i = bytes.length - 1; i >= 0; i--) {
            if (bytes[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static byte[] readFrom(Path file, long offset) {
        if (!Files.exists(file)) {
            return new byte[0];
        }
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            long length = raf.length();
            if (length <= offset) {
                return new byte[0];
            }
            byte[] bytes = new byte[(int) Math.min(length - offset, 8L << 20)];
            raf.seek(offset);
            raf.readFully(bytes);
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** The last {@code lines} lines of {@code file}; "" if it does not exist. */
    static String tail(Path file, int lines) {
        if (lines < 1) {
            throw new IllegalArgumentException("lines: " + lines + " (expected: >= 1)");
        }
        if (!Files.exists(file)) {
            return "";
        }
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            long length = raf.length();
            long window = Math.min(length, Math.max(64L << 10, lines * 1024L));
            byte[] bytes = new byte[(int) window];
            raf.seek(length - window);
            raf.readFully(bytes);
            String text = new String(bytes, StandardCharsets.UTF_8);
            List<String> all = new ArrayList<>(List.of(text.split("\r?\n", -1)));
            if (!all.isEmpty() && all.get(all.size() - 1).isEmpty()) {
                all.remove(all.size() - 1);
            }
            if (window < length && !all.isEmpty()) {
                all.remove(0); // probably cut in the middle
            }
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            throw interrupted("sleeping", e);
        }
    }

    /** Restores the interrupt flag and wraps {@code e}. */
    static IllegalStateException interrupted(String doing, InterruptedException e) {
        Thread.currentThread().interrupt();
        return new IllegalStateException("interrupted while " + doing, e);
    }

    /**
     * System property holding JVM options, separated by whitespace, that every child JVM started
     * by the testkit ({@link JavaProcess}, {@link KafkaBroker}) gets before its own options. The
     * root pom's test runs set {@code -XX:TieredStopAtLevel=1}: children live seconds to minutes,
     * and C2 compiling their code would take a large share of two cores for no gain in what a
     * test asserts. Unset (as in {@code bin/bench} and {@code bin/local-stack}): none.
     */
    static final String CHILD_JVM_OPTIONS_PROPERTY = "watchfanout.testkit.childJvmOptions";

    /** The options of {@link #CHILD_JVM_OPTIONS_PROPERTY}, empty if it is unset or blank. */
    static List<String> childJvmOptions() {
        String options = System.getProperty(CHILD_JVM_OPTIONS_PROPERTY, "").strip();
        return options.isEmpty() ? List.of() : List.of(options.split("\\s+"));
    }

    /** The java launcher of the running JVM. */
    static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * Writes a java launcher argument file ({@code java @file}) holding {@code -cp <classpath>},
     * so that long class paths neither hit the kernel's per-argument limit nor clutter {@code ps}.
     */
    static Path writeClasspathArgFile(Path file, String classpath) {
        String quoted = "\"" + classpath.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, "-cp\n" + quoted + "\n", StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
