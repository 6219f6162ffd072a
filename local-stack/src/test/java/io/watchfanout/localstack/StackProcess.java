package io.watchfanout.localstack;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * {@code bin/local-stack} started as a user starts it (the script, from some working
 * directory), with its terminal output collected and the status table it prints parsed.
 * Thread-safe.
 */
final class StackProcess implements AutoCloseable {
    /** A row of the status table: {@code name address pid N log FILE}. */
    record Part(String name, String address, long pid, Path log) {
        int port() {
            return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
        }
    }

    private static final Pattern PART = Pattern.compile("^  (\\S+)\\s+(\\S+)\\s+pid (\\d+)\\s+log (.+)$");
    private static final Pattern DATA_DIR = Pattern.compile("data and logs in (\\S+)");

    private final Process process;
    private final List<String> lines = new ArrayList<>();
    private final Path transcript;
    private final Thread reader;

    private StackProcess(Process process, Path transcript) {
        this.process = process;
        this.transcript = transcript;
        this.reader = new Thread(this::read, "local-stack-output");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Runs {@code script args} in {@code workingDirectory} with {@code env} added to this JVM's
     * environment; the output is also appended to {@code transcript}.
     */
    static StackProcess start(
            Path script, Path workingDirectory, List<String> args, Map<String, String> env, Path transcript)
            throws IOException {
        List<String> command = new ArrayList<>();
        command.add(script.toString());
        command.addAll(args);
        ProcessBuilder builder =
                new ProcessBuilder(command).directory(workingDirectory.toFile()).redirectErrorStream(true);
        builder.environment().putAll(env);
        Files.createDirectories(transcript.getParent());
        Files.writeString(transcript, "$ " + String.join(" ", command) + "\n", StandardCharsets.UTF_8);
        Process process = builder.start();
        process.getOutputStream().close();
        return new StackProcess(process, transcript);
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                synchronized (lines) {
                    lines.add(line);
                    lines.notifyAll();
                }
                Files.writeString(
                        transcript, line + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
            }
        } catch (IOException e) {
            // the process ended
        } finally {
            synchronized (lines) {
                lines.notifyAll();
            }
        }
    }

    /** The pid of {@code bin/local-stack}: the launcher JVM, since the script execs it. */
    long pid() {
        return process.pid();
    }

    /** Everything printed so far. */
    String output() {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    /**
     * Waits until a printed line contains {@code text}.
     *
     * @throws AssertionError on timeout or if the process exits first, with the output
     */
    void awaitLine(String text, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lines) {
            while (lines.stream().noneMatch(l -> l.contains(text))) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || (!process.isAlive() && !reader.isAlive())) {
                    throw new AssertionError(
                            "bin/local-stack did not print '" + text + "' within " + timeout.toSeconds() + " s (alive: "
                                    + process.isAlive() + "); it printed:\n" + String.join("\n", lines));
                }
                lines.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 200)));
            }
        }
    }

    /** The parts of the status table, by name (fan-out nodes as {@code fanout-node@PORT}). */
    Map<String, Part> parts() {
        Map<String, Part> parts = new LinkedHashMap<>();
        synchronized (lines) {
            for (String line : lines) {
                Matcher m = PART.matcher(line);
                if (m.matches()) {
                    Part p = new Part(
                            m.group(1),
                            m.group(2),
                            Long.parseLong(m.group(3)),
                            Path.of(m.group(4).trim()));
                    parts.put(p.name().equals("fanout-node") ? "fanout-node@" + p.port() : p.name(), p);
                }
            }
        }
        return parts;
    }

    /** The data directory of the first line of output. */
    Path dataDir() {
        synchronized (lines) {
            for (String line : lines) {
                Matcher m = DATA_DIR.matcher(line);
                if (m.find()) {
                    return Path.of(m.group(1));
                }
            }
        }
        throw new AssertionError("no data directory printed:\n" + output());
    }

    /** The pids of every process below the launcher, as they are now. */
    List<Long> descendantPids() {
        return process.descendants().map(ProcessHandle::pid).collect(Collectors.toList());
    }

    /** Every process below the launcher, as they are now. */
    List<ProcessHandle> descendants() {
        return process.descendants().collect(Collectors.toList());
    }

    /** Sends SIGTERM and waits for the exit. */
    Optional<Integer> terminate(Duration timeout) throws InterruptedException {
        // Through the handle: Process.destroy() would also close our end of its stdout, and the
        // lines it prints while stopping would be lost.
        process.toHandle().destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return Optional.empty();
        }
        reader.join(5_000);
        return Optional.of(process.exitValue());
    }

    /** Kills the launcher and every process below it (clean-up after a failed test). */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
