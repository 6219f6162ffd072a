package io.watchfanout.bench;

import java.io.PrintStream;

/**
 * The progress line on stderr while a scenario runs, rewritten in place ({@code \r}) on a
 * terminal, one line per update otherwise (every few seconds, so a log stays short).
 */
final class Progress {
    private static final boolean TTY = System.console() != null;
    private final PrintStream err = System.err;
    private final long started = System.nanoTime();
    private long lastPrinted;
    private int lastLength;

    /** Shows {@code text} prefixed by the elapsed time. */
    synchronized void show(String text) {
        long now = System.nanoTime();
        String line = String.format("[%5.0fs] %s", (now - started) / 1e9, text);
        if (TTY) {
            err.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
            err.flush();
            lastLength = line.length();
        } else if (now - lastPrinted > 5_000_000_000L) {
            err.println(line);
            lastPrinted = now;
        }
    }

    /** Ends the current line and prints {@code text} on its own. */
    synchronized void log(String text) {
        if (TTY && lastLength > 0) {
            err.println();
            lastLength = 0;
        }
        err.printf("[%5.0fs] %s%n", (System.nanoTime() - started) / 1e9, text);
    }
}
