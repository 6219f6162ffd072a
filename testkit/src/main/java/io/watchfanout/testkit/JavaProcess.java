package io.watchfanout.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * A Java main class (or executable jar) running as a child JVM, with its stdout and stderr
 * appended to a log file: how tests run the ingester or a fan-out node as a real process that
 * they can {@link #kill()} with SIGKILL.
 *
 * <pre>{@code
 * try (JavaProcess ingester = JavaProcess.builder("io.watchfanout.ingester.Main")
 *         .args("--etcd", etcd.clientUrl(), "--kafka", kafka.bootstrapServers())
 *         .maxHeap("256m")
 *         .start()) {
 *     ingester.awaitLog("watching etcd", Duration.ofSeconds(30));
 *     ingester.kill();   // kill -9
 * }
 * }</pre>
 *
 * <p>Every child is also killed by a JVM shutdown hook, so none outlives the test JVM.
 * A {@code JavaProcess} runs once; start a new one to restart.
 *
 * <p>Thread-safety: all methods may be called from any thread; {@link #kill()}, {@link #stop()}
 * and {@link #close()} are serialized. Errors are {@link IllegalStateException}s whose message
 * names the log file and holds its last lines; an interrupt while waiting restores the
 * interrupt flag and throws {@link IllegalStateException}.
 */
public final class JavaProcess implements AutoCloseable {
    /** How long {@link #stop()} and {@link #close()} wait after SIGTERM before SIGKILL. */
    public static final Duration DEFAULT_STOP_TIMEOUT = Duration.ofSeconds(30);

    private final ManagedProcess process;

    private JavaProcess(ManagedProcess process) {
        this.process = process;
    }

    /**
     * Returns a builder for a child JVM running {@code mainClass} from this JVM's class path.
     *
     * @param mainClass the fully qualified name of the class with {@code main}
     * @return a new builder; not thread-safe
     */
    public static Builder builder(String mainClass) {
        return new Builder(Objects.requireNonNull(mainClass, "mainClass"), null);
    }

    /**
     * Returns a builder for a child JVM running {@code java -jar jar}.
     *
     * @param jar an executable jar (with a {@code Main-Class} manifest entry)
     * @return a new builder; not thread-safe
     */
    public static Builder builderForJar(Path jar) {
        return new Builder(null, Objects.requireNonNull(jar, "jar").toAbsolutePath());
    }

    /**
     * The operating-system process id of the child JVM.
     *
     * @return the pid
     */
    public long pid() {
        return process.pid();
    }

    /**
     * Whether the child JVM is still running.
     *
     * @return true until it exits or is killed
     */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * The exit code of the child JVM (143 after SIGTERM, 137 after SIGKILL).
     *
     * @return the exit code, or empty while it runs
     */
    public OptionalInt exitCode() {
        return process.exitCode();
    }

    /**
     * Waits for the child JVM to exit by itself.
     *
     * @param timeout how long to wait at most
     * @return the exit code, or empty if it still runs after {@code timeout}
     */
    public OptionalInt waitForExit(Duration timeout) {
        return process.waitForExit(timeout);
    }

    /**
     * Kills the child JVM (and any process it started) with SIGKILL and waits until it is gone;
     * a no-op if it already exited.
     */
    public void kill() {
        process.kill();
    }

    /**
     * Stops the child JVM with SIGTERM (its shutdown hooks run) and waits up to
     * {@link #DEFAULT_STOP_TIMEOUT}, then SIGKILL.
     *
     * @return the exit code
     */
    public int stop() {
        return stop(DEFAULT_STOP_TIMEOUT);
    }

    /**
     * Stops the child JVM with SIGTERM and waits up to {@code timeout}, then SIGKILL.
     *
     * @param timeout how long to wait for a graceful exit
     * @return the exit code
     */
    public int stop(Duration timeout) {
        return process.stop(timeout).orElseThrow();
    }

    /**
     * The file receiving the child's stdout and stderr.
     *
     * @return the log file; it is kept after the process ends
     */
    public Path logFile() {
        return process.logFile();
    }

    /**
     * The last lines of the child's log.
     *
     * @param lines how many lines, at least 1
     * @return the lines joined by {@code \n}; empty if nothing was logged yet
     */
    public String logTail(int lines) {
        return process.logTail(lines);
    }

    /**
     * Waits until the child logs a line containing {@code text} (searching everything it logged,
     * from its start).
     *
     * @param text the substring to wait for
     * @param timeout how long to wait at most
     * @return the first line containing {@code text}
     * @throws IllegalStateException on timeout, or if the child exits without logging it; the
     *     message holds the log file's path and last lines
     */
    public String awaitLog(String text, Duration timeout) {
        Objects.requireNonNull(text, "text");
        return process.awaitLogLine(line -> line.contains(text), "'" + text + "'", timeout);
    }

    /** Stops the child like {@link #stop()} if it still runs. Idempotent. */
    @Override
    public void close() {
        process.stop(DEFAULT_STOP_TIMEOUT);
    }

    @Override
    public String toString() {
        return "JavaProcess{" + process.description() + ", log=" + logFile() + ", alive=" + isAlive() + "}";
    }

    /**
     * Settings of a {@link JavaProcess}. Not thread-safe; each setter returns this builder.
     */
    public static final class Builder {
        private final String mainClass;
        private final Path jar;
        private String classpath = System.getProperty("java.class.path");
        private final List<String> args = new ArrayList<>();
        private final List<String> jvmArgs = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private String maxHeap = "256m";
        private Path logFile;
        private Path workingDirectory;
        private String name;

        private Builder(String mainClass, Path jar) {
            this.mainClass = mainClass;
            this.jar = jar;
        }

        /**
         * The class path of the child; default this JVM's {@code java.class.path}. Ignored for a jar.
         *
         * @param classpath entries separated by {@code :}
         * @return this builder
         */
        public Builder classpath(String classpath) {
            this.classpath = Objects.requireNonNull(classpath, "classpath");
            return this;
        }

        /**
         * Appends program arguments.
         *
         * @param arguments the arguments, in order
         * @return this builder
         */
        public Builder args(String... arguments) {
            for (String a : arguments) {
                this.args.add(Objects.requireNonNull(a, "argument"));
            }
            return this;
        }

        /**
         * Appends program arguments.
         *
         * @param arguments the arguments, in order
         * @return this builder
         */
        public Builder args(List<String> arguments) {
            return args(arguments.toArray(new String[0]));
        }

        /**
         * Appends a JVM option, e.g. {@code -XX:+UseSerialGC}.
         *
         * @param arg the option
         * @return this builder
         */
        public Builder jvmArg(String arg) {
            this.jvmArgs.add(Objects.requireNonNull(arg, "arg"));
            return this;
        }

        /**
         * Adds a system property ({@code -Dkey=value}).
         *
         * @param key the property name
         * @param value its value
         * @return this builder
         */
        public Builder systemProperty(String key, String value) {
            return jvmArg("-D" + Objects.requireNonNull(key, "key") + "=" + Objects.requireNonNull(value, "value"));
        }

        /**
         * Sets an environment variable of the child (the rest is inherited from this JVM).
         *
         * @param key the variable name
         * @param value its value
         * @return this builder
         */
        public Builder env(String key, String value) {
            this.env.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * The child's maximum heap; default {@code 256m}.
         *
         * @param maxHeap a {@code -Xmx} value such as {@code 256m} or {@code 1g}
         * @return this builder
         */
        public Builder maxHeap(String maxHeap) {
            this.maxHeap = Objects.requireNonNull(maxHeap, "maxHeap");
            return this;
        }

        /**
         * The log file (appended to); default {@code process.log} in a new directory under
         * {@code target/testkit}.
         *
         * @param file the file
         * @return this builder
         */
        public Builder logFile(Path file) {
            this.logFile = Objects.requireNonNull(file, "file").toAbsolutePath();
            return this;
        }

        /**
         * The child's working directory; default the log file's directory.
         *
         * @param dir the directory
         * @return this builder
         */
        public Builder workingDirectory(Path dir) {
            this.workingDirectory = Objects.requireNonNull(dir, "dir").toAbsolutePath();
            return this;
        }

        /**
         * A short name for log lines and the default directory; default the main class's simple
         * name or the jar's file name.
         *
         * @param name e.g. {@code ingester-1}
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * Starts the child JVM. It does not wait for anything: use {@link JavaProcess#awaitLog}.
         *
         * @return the running process
         * @throws IllegalStateException if the {@code java} launcher cannot be started
         */
        public JavaProcess start() {
            String label = name != null
                    ? name
                    : mainClass != null
                            ? mainClass.substring(mainClass.lastIndexOf('.') + 1)
                            : jar.getFileName().toString();
            String dirName = label.replaceAll("[^A-Za-z0-9._-]", "_");
            Path log = logFile != null
                    ? logFile
                    : WorkDirs.newInstanceDir("java-" + dirName).resolve("process.log");
            Path wd = workingDirectory != null ? workingDirectory : log.getParent();
            List<String> cmd = new ArrayList<>();
            cmd.add(ManagedProcess.javaExecutable());
            cmd.add("-Xmx" + maxHeap);
            cmd.add("-XX:+ExitOnOutOfMemoryError");
            cmd.add("-Djava.awt.headless=true");
            // a child that uses the testkit itself keeps its work directories next to ours
            cmd.add("-D" + WorkDirs.BASE_DIR_PROPERTY + "=" + WorkDirs.base().toAbsolutePath());
            cmd.addAll(ManagedProcess.childJvmOptions());
            cmd.addAll(jvmArgs);
            if (jar != null) {
                cmd.add("-jar");
                cmd.add(jar.toString());
            } else {
                Path argFile = log.resolveSibling(log.getFileName() + ".classpath.args");
                cmd.add("@" + ManagedProcess.writeClasspathArgFile(argFile, classpath));
                cmd.add(mainClass);
            }
            cmd.addAll(args);
            ManagedProcess process = new ManagedProcess("java " + label, cmd, new LinkedHashMap<>(env), wd, log);
            process.launch();
            return new JavaProcess(process);
        }
    }
}
