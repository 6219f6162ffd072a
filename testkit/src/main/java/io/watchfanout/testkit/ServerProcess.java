package io.watchfanout.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle {@link EtcdServer} and {@link KafkaBroker} share: one child process on a work
 * directory ({@code data/} plus a log file kept across restarts), started by the subclass and
 * then killed, stopped, restarted and closed the same way.
 *
 * <p>Thread-safety: lifecycle methods are serialized on the instance; {@code process} is
 * written under it and read without it.
 */
abstract class ServerProcess implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerProcess.class);

    /** What the server is, for messages: "etcd", "Kafka broker". */
    final String kind;

    final Path workDir;
    final Path dataDir;
    final Path logFile;
    final Duration stopTimeout;
    final boolean keepData;

    volatile ManagedProcess process; // written under this; null until the first start
    boolean failed; // guarded by this: a failed start keeps the data for inspection
    boolean closed; // guarded by this

    ServerProcess(String kind, Path workDir, String logFileName, Duration stopTimeout, boolean keepData) {
        this.kind = kind;
        this.workDir = workDir;
        this.dataDir = workDir.resolve("data");
        this.logFile = workDir.resolve(logFileName);
        this.stopTimeout = stopTimeout;
        this.keepData = keepData;
    }

    /** Starts (or starts again) the process and waits until it serves. */
    abstract ServerProcess start();

    /** Where it serves, for messages. */
    abstract String address();

    /**
     * The data directory.
     *
     * @return an absolute path; stable across restarts
     */
    public Path dataDir() {
        return dataDir;
    }

    /**
     * The file receiving the process's stdout and stderr, appended to across restarts and kept on
     * close.
     *
     * @return an absolute path next to {@link #dataDir()}
     */
    public Path logFile() {
        return logFile;
    }

    /**
     * Whether the process is running (it may still be starting).
     *
     * @return true between a start and the next stop, kill or crash
     */
    public boolean isAlive() {
        ManagedProcess p = process;
        return p != null && p.isAlive();
    }

    /**
     * The operating-system process id of the current (or last) process.
     *
     * @return the pid
     * @throws IllegalStateException if it was never started
     */
    public long pid() {
        ManagedProcess p = process;
        if (p == null) {
            throw new IllegalStateException(kind + " at " + address() + " was never started");
        }
        return p.pid();
    }

    /**
     * The exit code of the current (or last) process.
     *
     * @return empty while it runs or if it was never started
     */
    public OptionalInt exitCode() {
        ManagedProcess p = process;
        return p == null ? OptionalInt.empty() : p.exitCode();
    }

    /**
     * Kills the process with SIGKILL ({@link Process#destroyForcibly()}) and waits until it is
     * gone: a crash, with no graceful shutdown. A no-op if it is not running.
     */
    public synchronized void kill() {
        if (process != null) {
            process.kill();
        }
    }

    /**
     * Stops the process with SIGTERM and waits for it to exit (SIGKILL after the stop timeout).
     * A no-op if it is not running.
     */
    public synchronized void stop() {
        if (process != null) {
            process.stop(stopTimeout);
        }
    }

    /**
     * Stops the process if it runs ({@link #stop()}), then starts it again on the same data
     * directory and the same ports and waits until it serves.
     *
     * @throws IllegalStateException as the subclass's {@code start()}
     */
    public synchronized void restart() {
        stop();
        start();
    }

    /**
     * The last lines of the log.
     *
     * @param lines how many lines, at least 1
     * @return the lines joined by {@code \n}; empty if nothing was logged yet
     */
    public String logTail(int lines) {
        return ManagedProcess.tail(logFile, lines);
    }

    /**
     * Stops the process (SIGTERM, then SIGKILL after the stop timeout) and deletes the data
     * directory unless data is to be kept (a failed start, {@code keepData}). The log file is
     * kept. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop();
        if (failed || keepData) {
            LOG.info("{} closed; data kept in {}, log {}", kind, dataDir, logFile);
        } else {
            WorkDirs.deleteRecursively(dataDir);
        }
    }

    /**
     * The settings {@link EtcdServer.Builder} and {@link KafkaBroker.Builder} share: the work
     * directory, the start and stop timeouts and whether the data outlives {@link #close()}. Not
     * thread-safe; each setter returns the concrete builder.
     *
     * @param <B> the concrete builder
     */
    abstract static class LifecycleBuilder<B extends LifecycleBuilder<B>> {
        Duration startTimeout;
        Duration stopTimeout;
        boolean keepData = WorkDirs.keepDataByDefault();
        Path workDir;

        LifecycleBuilder(Duration startTimeout, Duration stopTimeout) {
            this.startTimeout = startTimeout;
            this.stopTimeout = stopTimeout;
        }

        private B self() {
            @SuppressWarnings("unchecked") // B is the class of this builder, as the type parameter's bound says
            B b = (B) this;
            return b;
        }

        /**
         * How long {@code start()} may take until the server serves; default 30 s for etcd, 120 s
         * for a Kafka broker (formatting included).
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public B startTimeout(Duration timeout) {
            this.startTimeout = requirePositive(timeout, "startTimeout");
            return self();
        }

        /**
         * How long {@code stop()} waits after SIGTERM before SIGKILL; default 30 s for etcd, 60 s
         * for a Kafka broker.
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public B stopTimeout(Duration timeout) {
            this.stopTimeout = requirePositive(timeout, "stopTimeout");
            return self();
        }

        /**
         * Whether {@code close()} keeps the data directory; default false, or the system property
         * {@code watchfanout.testkit.keepData}.
         *
         * @param keep true to keep it
         * @return this builder
         */
        public B keepData(boolean keep) {
            this.keepData = keep;
            return self();
        }

        /**
         * The directory holding {@code data/} and the log file; default a new directory under
         * {@code target/testkit} (see {@code watchfanout.testkit.dir}). An existing data directory
         * is reused: etcd then ignores its {@code --initial-cluster*} flags, and a Kafka broker's
         * cluster id and ports must match those it was formatted with.
         *
         * @param dir the directory
         * @return this builder
         */
        public B workDir(Path dir) {
            this.workDir = Objects.requireNonNull(dir, "dir");
            return self();
        }

        /** {@code workDir}, absolute, or a new directory named after {@code kind} under {@code target/testkit}. */
        Path workDirOrNew(String kind) {
            return workDir != null ? workDir.toAbsolutePath() : WorkDirs.newInstanceDir(kind);
        }

        static int requirePort(int port, String name) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(name + ": " + port + " (expected: 0..65535)");
            }
            return port;
        }

        static Duration requirePositive(Duration d, String name) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
            }
            return d;
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + address() + ", dataDir=" + dataDir + ", alive=" + isAlive() + "}";
    }
}
