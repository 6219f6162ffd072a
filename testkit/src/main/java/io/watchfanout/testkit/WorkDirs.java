package io.watchfanout.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where servers and child processes keep their data and logs.
 *
 * <p>The base directory is the system property {@value #BASE_DIR_PROPERTY} if set, else
 * {@code target/testkit} when the working directory holds a {@code target} directory (a Maven
 * test run: logs stay next to the surefire reports until {@code mvn clean}), else
 * {@code <java.io.tmpdir>/watchfanout-testkit}. Each instance gets its own directory below it.
 *
 * <p>Thread-safe.
 */
public final class WorkDirs {
    /** System property naming the base directory. */
    static final String BASE_DIR_PROPERTY = "watchfanout.testkit.dir";
    /** System property: when {@code true}, data directories are kept on close. */
    static final String KEEP_DATA_PROPERTY = "watchfanout.testkit.keepData";

    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private WorkDirs() {}

    /** Creates a new, empty directory {@code <base>/<kind>-<time>-<pid>-<seq>}. */
    static Path newInstanceDir(String kind) {
        String name = kind + "-" + LocalDateTime.now().format(STAMP) + "-"
                + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet();
        Path dir = base().resolve(name);
        try {
            return Files.createDirectories(dir).toAbsolutePath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create testkit directory " + dir, e);
        }
    }

    /** Whether {@value #KEEP_DATA_PROPERTY} asks to keep data directories. */
    static boolean keepDataByDefault() {
        return Boolean.getBoolean(KEEP_DATA_PROPERTY);
    }

    /** The base directory (see the class comment); not created here. */
    static Path base() {
        String configured = System.getProperty(BASE_DIR_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        Path target = Path.of(System.getProperty("user.dir"), "target");
        if (Files.isDirectory(target)) {
            return target.resolve("testkit");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "watchfanout-testkit");
    }

    /**
     * Deletes {@code dir} and everything below it; a missing directory, or files that vanish
     * meanwhile (a process still shutting down), are not an error.
     *
     * @throws UncheckedIOException when a file cannot be deleted
     */
    public static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw e;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    private static void deleteIfExists(Path path) throws IOException {
        try {
            Files.deleteIfExists(path);
        } catch (NoSuchFileException e) {
            // removed concurrently
        }
    }
}
