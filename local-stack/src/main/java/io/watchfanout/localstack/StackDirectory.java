package io.watchfanout.localstack;

import io.watchfanout.testkit.WorkDirs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The directory of one local stack: a directory per part with its data and log,
 * <pre>
 *   etcd/          data/ (etcd's --data-dir), etcd.log
 *   kafka/         data/ (log.dirs, KRaft metadata), kafka.log, server.properties
 *   ingester/      ingester.log, tmp/ (its java.io.tmpdir)
 *   fanout-PORT/   fanout-node.log, tmp/
 *   local-stack.log
 * </pre>
 * Either the {@code --data-dir} the user gave (kept at exit, so that a restart resumes from it)
 * or a new temporary directory (removed at exit).
 *
 * <p>Immutable; {@link #removeIfTemporary()} may be called from any thread.
 */
final class StackDirectory {
    private final Path root;
    private final boolean temporary;

    private StackDirectory(Path root, boolean temporary) {
        this.root = root;
        this.temporary = temporary;
    }

    /**
     * Creates (if needed) the given directory, or a new temporary one.
     *
     * @param dataDir the user's {@code --data-dir}, or empty
     * @throws IllegalArgumentException naming {@code --data-dir} when it is a file, cannot be
     *     created, or cannot be written
     * @throws UncheckedIOException if a temporary directory cannot be created
     */
    static StackDirectory open(Optional<Path> dataDir) {
        if (dataDir.isPresent()) {
            Path dir = dataDir.get().toAbsolutePath().normalize();
            if (Files.exists(dir) && !Files.isDirectory(dir)) {
                throw new IllegalArgumentException("--data-dir: " + dir + " is a file (expected: a directory)");
            }
            try {
                Files.createDirectories(dir);
            } catch (IOException | SecurityException e) {
                throw new IllegalArgumentException("--data-dir: cannot create " + dir + ": " + reason(e)
                        + " (expected: a directory this user can create and write)");
            }
            if (!Files.isWritable(dir)) {
                throw new IllegalArgumentException(
                        "--data-dir: " + dir + " is not writable (expected: a directory this user can write)");
            }
            return new StackDirectory(dir, false);
        }
        try {
            return new StackDirectory(Files.createTempDirectory("watch-fanout-").toAbsolutePath(), true);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot create the local stack's data directory in " + System.getProperty("java.io.tmpdir") + ": "
                            + reason(e),
                    e);
        }
    }

    /** What went wrong, without the exception's class: {@code FileSystemException}s say the path twice. */
    private static String reason(Exception e) {
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        if (e instanceof NoSuchFileException f) {
            return f.getFile() + " does not exist";
        }
        if (e instanceof FileAlreadyExistsException f) {
            return f.getFile() + " is a file";
        }
        return e instanceof AccessDeniedException ? "permission denied" : String.valueOf(e);
    }

    /**
     * Refuses a kept directory whose Kafka data was made with another {@code --kafka-brokers}: the
     * brokers would start on new, empty storage beside the old one, the ingester would publish
     * its history anew, and every resume point of the last run would be gone (410).
     *
     * @param brokers this run's {@code --kafka-brokers}
     * @throws IllegalArgumentException naming both settings
     */
    void checkKafkaBrokers(int brokers) {
        int before = kafkaBrokersBefore();
        if (before != 0 && before != brokers) {
            throw new IllegalArgumentException("--kafka-brokers " + brokers + " with --data-dir " + root
                    + ", whose Kafka data was made by --kafka-brokers " + before + " (expected: --kafka-brokers "
                    + before + " to resume it, or another --data-dir for " + brokers + " broker"
                    + (brokers == 1 ? "" : "s") + ")");
        }
    }

    /**
     * How many brokers the Kafka data in this directory was formatted for: 1 for {@code kafka/},
     * N for {@code kafka-1/} to {@code kafka-N/}; 0 when there is none.
     */
    private int kafkaBrokersBefore() {
        if (formatted(part("kafka"))) {
            return 1;
        }
        int n = 0;
        while (formatted(part("kafka-" + (n + 1)))) {
            n++;
        }
        return n;
    }

    private static boolean formatted(Path brokerDir) {
        return Files.isRegularFile(brokerDir.resolve("data").resolve("meta.properties"));
    }

    /** The root directory, absolute. */
    Path root() {
        return root;
    }

    /** True when it is removed at exit (no {@code --data-dir} was given). */
    boolean temporary() {
        return temporary;
    }

    /** The directory of one part, e.g. {@code etcd} (not created here). */
    Path part(String name) {
        return root.resolve(name);
    }

    /** The launcher's own log file. */
    Path launcherLog() {
        return root.resolve("local-stack.log");
    }

    /** Deletes the whole directory if it is temporary; a no-op otherwise. */
    void removeIfTemporary() {
        if (temporary) {
            WorkDirs.deleteRecursively(root);
        }
    }
}
