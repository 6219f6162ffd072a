package io.watchfanout.fanout.security;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A file's parsed contents, parsed again when the file changed ({@link FileStamp}): the policy
 * file, the token file, the JWKS. A new version that cannot be read or parsed keeps the previous
 * contents.
 *
 * <p>Thread-safe: {@link #get()} from any thread; {@link #reload()} from one at a time (the
 * security thread).
 *
 * @param <T> the parsed contents, immutable
 */
final class ReloadingFile<T> {
    /** Reads and parses the file. */
    interface Parser<T> {
        /** @throws IOException when the file cannot be read or is invalid (the message names the file) */
        T parse(Path file) throws IOException;
    }

    private final Path file;
    private final Parser<T> parser;
    private volatile T contents;
    private volatile FileStamp stamp;

    /**
     * Reads the file.
     *
     * @throws IOException when it cannot be read or parsed
     */
    ReloadingFile(Path file, Parser<T> parser) throws IOException {
        this.file = file;
        this.parser = parser;
        this.stamp = FileStamp.of(file);
        this.contents = parser.parse(file);
    }

    /** The contents last parsed. */
    T get() {
        return contents;
    }

    /** The file. */
    Path file() {
        return file;
    }

    /**
     * Parses the file again if it changed.
     *
     * @return true when the contents changed (by {@code equals})
     * @throws IOException when the changed file cannot be read or parsed; the previous contents stay
     */
    boolean reload() throws IOException {
        FileStamp now = FileStamp.of(file);
        if (now.equals(stamp)) {
            return false;
        }
        T parsed = parser.parse(file);
        stamp = now;
        if (parsed.equals(contents)) {
            return false;
        }
        contents = parsed;
        return true;
    }
}
