package io.watchfanout.common.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Something made from files (a key pair, a trust store) that is made again when the files
 * change on disk: {@link #current()} looks at most once per interval whether any file has a new
 * identity (inode), modification time or size, and if one has and its bytes differ, loads the
 * new bytes. Files that do not load (half written, a key that does not match its certificate,
 * gone for a moment during a rotation) are logged once, and the last good value stays in use:
 * a bad rotation never stops a listener.
 *
 * <p>The look happens on the thread that calls {@link #current()}, a handshake's; one thread
 * looks at a time, the others take the current value without waiting.
 *
 * <p>Thread-safe.
 *
 * @param <T> what the files make
 */
final class ReloadingFiles<T> {
    private static final Logger LOG = LoggerFactory.getLogger(ReloadingFiles.class);

    private final String what;
    private final List<Path> files;
    private final List<String> flags;
    private final Function<List<byte[]>, T> loader;
    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private final ReentrantLock looking = new ReentrantLock();

    private volatile T current;
    private volatile T previous;
    private volatile long nextLookNanos;
    /** The files' identity, time and size as last looked at: loaded, or failed to load. Guarded by {@link #looking}. */
    private List<Object> seen;
    /** The bytes {@link #current} was made from. Guarded by {@link #looking}. */
    private List<byte[]> loadedBytes;
    /** The last failure logged, so that one bad rotation is logged once. Guarded by {@link #looking}. */
    private String lastFailure;

    /**
     * Loads the files now.
     *
     * @param what what the files are, for log lines, e.g. {@code the TLS certificate}
     * @param files the files, read in this order and handed to {@code loader}
     * @param flags the flag of each file, for messages
     * @param loader makes the value from the files' bytes; throws {@link TlsMaterialException}
     *     (or another runtime exception) for bytes it cannot use
     * @param interval the least time between two looks at the files
     * @param nanoTime the clock of the interval ({@link System#nanoTime()})
     * @throws TlsMaterialException if a file cannot be read or {@code loader} refuses them
     */
    ReloadingFiles(
            String what,
            List<Path> files,
            List<String> flags,
            Function<List<byte[]>, T> loader,
            Duration interval,
            LongSupplier nanoTime) {
        this.what = what;
        this.files = List.copyOf(files);
        this.flags = List.copyOf(flags);
        this.loader = loader;
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
        this.seen = fingerprint();
        this.loadedBytes = read();
        this.current = Objects.requireNonNull(loader.apply(loadedBytes), "loaded");
        this.nextLookNanos = nanoTime.getAsLong() + intervalNanos;
    }

    /** The value of the files as they are now, looked at no more than once per interval. */
    T current() {
        if (nanoTime.getAsLong() - nextLookNanos >= 0 && looking.tryLock()) {
            try {
                look();
            } finally {
                looking.unlock();
            }
        }
        return current;
    }

    /** The value before the last reload, or null: one that a handshake under way may still be using. */
    T previous() {
        return previous;
    }

    private void look() {
        nextLookNanos = nanoTime.getAsLong() + intervalNanos;
        List<byte[]> bytes;
        List<Object> now;
        try {
            now = fingerprint();
            if (now.equals(seen)) {
                return;
            }
            bytes = read();
        } catch (TlsMaterialException e) {
            failed(e.getMessage());
            return;
        }
        seen = now;
        if (sameBytes(bytes, loadedBytes)) {
            return; // touched or copied over with the same content
        }
        T next;
        try {
            next = Objects.requireNonNull(loader.apply(bytes), "loaded");
        } catch (RuntimeException e) {
            failed(e.getMessage());
            return;
        }
        previous = current;
        current = next;
        loadedBytes = bytes;
        lastFailure = null;
        LOG.info("reloaded {} from {}: {}", what, files, next);
    }

    private void failed(String message) {
        if (!Objects.equals(message, lastFailure)) {
            lastFailure = message;
            LOG.warn(
                    "{} not reloaded, the current one stays in use: {} (files replaced one at a time are "
                            + "picked up once all are in place)",
                    what,
                    message);
        }
    }

    private List<Object> fingerprint() {
        List<Object> parts = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            try {
                BasicFileAttributes a = Files.readAttributes(files.get(i), BasicFileAttributes.class);
                parts.add(String.valueOf(a.fileKey()));
                parts.add(a.lastModifiedTime());
                parts.add(a.size());
            } catch (IOException e) {
                throw unreadable(i, e);
            }
        }
        return parts;
    }

    private List<byte[]> read() {
        List<byte[]> bytes = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            try {
                bytes.add(Files.readAllBytes(files.get(i)));
            } catch (IOException e) {
                throw unreadable(i, e);
            }
        }
        return bytes;
    }

    private TlsMaterialException unreadable(int i, IOException e) {
        String source = flags.get(i) + " " + files.get(i);
        if (e instanceof NoSuchFileException) {
            return new TlsMaterialException(source + ": no such file", e);
        }
        return new TlsMaterialException(
                source + ": cannot read (" + Objects.requireNonNullElse(e.getMessage(), e.toString()) + ")", e);
    }

    private static boolean sameBytes(List<byte[]> a, List<byte[]> b) {
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }
}
