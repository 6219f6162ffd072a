package io.watchfanout.localstack;

import io.watchfanout.testkit.WorkDirs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
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
     * @throws UncheckedIOException if it cannot be created
     */
    static StackDirectory open(Optional<Path> dataDir) {
        try {
            if (dataDir.isPresent()) {
                Path dir = dataDir.get().toAbsolutePath().normalize();
                if (Files.exists(dir) && !Files.isDirectory(dir)) {
                    throw new IllegalArgumentException("--data-dir: " + dir + " is a file (expected: a directory)");
                }
                return new StackDirectory(Files.createDirectories(dir), false);
            }
            return new StackDirectory(Files.createTempDirectory("watch-fanout-").toAbsolutePath(), true);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot create the local stack's data directory"
                            + dataDir.map(d -> " " + d).orElse(" in " + System.getProperty("java.io.tmpdir")) + ": "
                            + e,
                    e);
        }
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
