package io.watchfanout.kube.kafka.cli;

/**
 * A failure that {@code kube-events} reports as one line on stderr with exit status 1: what is wrong
 * and, where it helps, what to do.
 */
final class CliException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CliException(String message) {
        super(message, null, false, false);
    }
}
