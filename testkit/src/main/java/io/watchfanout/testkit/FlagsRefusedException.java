package io.watchfanout.testkit;

/**
 * A child process that exited with the usage exit status 2 while starting: it refused its flags
 * (a bad {@code WATCHFANOUT_*} value or argument), so the caller's own input was wrong, not the
 * machine; a launcher reports it as a usage error (exit 2) rather than a failed start (exit 1).
 * The message names the process and quotes its own error line.
 *
 * <p>Immutable and thread-safe.
 */
public final class FlagsRefusedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what refused which flag, with the child's error line
     */
    public FlagsRefusedException(String message) {
        super(message);
    }
}
