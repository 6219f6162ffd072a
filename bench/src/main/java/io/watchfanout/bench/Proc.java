package io.watchfanout.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time and resident memory of a process, from {@code /proc/<pid>/stat} (utime + stime, in
 * clock ticks of {@code getconf CLK_TCK}, 100 on Linux x86-64) and {@code /proc/<pid>/status}
 * ({@code VmRSS}). Linux only.
 */
final class Proc {
    /** USER_HZ: the unit of utime and stime. */
    static final long CLOCK_TICKS_PER_SECOND = clockTicks();

    private Proc() {}

    /** CPU seconds (user + system) the process has used so far, or NaN when it is gone. */
    static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.US_ASCII);
            // comm (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long utime = Long.parseLong(f[11]);
            long stime = Long.parseLong(f[12]);
            return (utime + stime) / (double) CLOCK_TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /**
     * CPU seconds (user + system) that the threads of a process whose name starts with
     * {@code threadPrefix} have used so far ({@code /proc/<pid>/task/<tid>/stat}), e.g. the JIT
     * compilers' ("C2 CompilerThre", as the kernel truncates it); threads that ended are not
     * counted. 0 when the process is gone.
     */
    static double threadCpuSeconds(long pid, String threadPrefix) {
        long ticks = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String stat = Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII);
                    String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    if (comm.startsWith(threadPrefix)) {
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    }
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return ticks / (double) CLOCK_TICKS_PER_SECOND;
    }

    /** Resident set size in bytes, or -1 when the process is gone. */
    static long rssBytes(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("VmRSS:")) {
                    String[] f = line.trim().split("\\s+");
                    return Long.parseLong(f[1]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /**
     * The pid of the first descendant of this JVM whose command line holds {@code fragment}
     * (e.g. {@code kafka.Kafka}, the broker's main class), or -1 when there is none.
     */
    static long descendant(String fragment) {
        return ProcessHandle.current()
                .descendants()
                .filter(p -> p.info().commandLine().orElse("").contains(fragment))
                .mapToLong(ProcessHandle::pid)
                .findFirst()
                .orElse(-1);
    }

    /** This JVM's pid. */
    static long self() {
        return ProcessHandle.current().pid();
    }

    private static long clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            p.waitFor();
            return Long.parseLong(out);
        } catch (IOException | RuntimeException e) {
            return 100;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 100;
        }
    }

    /** CPU seconds of a process over an interval: sample {@link #start}, then {@link #seconds}. */
    static final class CpuMeter {
        private final long pid;
        private double start;

        CpuMeter(long pid) {
            this.pid = pid;
        }

        CpuMeter start() {
            start = cpuSeconds(pid);
            return this;
        }

        double seconds() {
            return cpuSeconds(pid) - start;
        }
    }
}
