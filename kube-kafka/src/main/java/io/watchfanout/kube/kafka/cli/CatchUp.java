package io.watchfanout.kube.kafka.cli;

import java.io.PrintWriter;

/**
 * The progress line of a long read on stderr: once a read has taken more than a second, at most
 * one line a second saying how far it is ({@code offset} of the {@code end} it reads to). On a
 * terminal the line is rewritten in place and erased when the read is done.
 *
 * <p>Not thread-safe: the reading thread's.
 */
final class CatchUp {
    /** Makes the progress line of one read. */
    @FunctionalInterface
    interface Factory {
        /** The progress line of reading {@code what} from {@code startOffset}. */
        CatchUp from(String what, long startOffset);
    }

    private static final long QUIET_NANOS = 1_000_000_000L;

    private final PrintWriter err;
    private final boolean terminal;
    private final String what;
    private final long startOffset;
    private final long startNanos = System.nanoTime();
    private long lastNanos = startNanos;
    private int shown;

    /**
     * @param err where the line goes
     * @param terminal whether {@code err} is a terminal (the line is rewritten in place)
     * @param what what is read, e.g. the topic's name
     * @param startOffset the offset the read starts at
     */
    CatchUp(PrintWriter err, boolean terminal, String what, long startOffset) {
        this.err = err;
        this.terminal = terminal;
        this.what = what;
        this.startOffset = startOffset;
    }

    /** The read is at {@code offset} on its way to {@code end}. */
    void at(long offset, long end) {
        long now = System.nanoTime();
        if (now - startNanos < QUIET_NANOS || now - lastNanos < QUIET_NANOS || offset >= end) {
            return;
        }
        lastNanos = now;
        long total = Math.max(1, end - startOffset);
        String line = "kube-events: reading " + what + ": " + (offset - startOffset) + " of " + total + " records ("
                + (offset - startOffset) * 100 / total + " %)";
        shown = Math.max(shown, line.length());
        err.print(terminal ? "\r" + line : line + "\n");
        err.flush();
    }

    /** The read is done: erases the line on a terminal. */
    void done() {
        if (terminal && shown > 0) {
            err.print("\r" + " ".repeat(shown) + "\r");
            err.flush();
            shown = 0;
        }
    }
}
