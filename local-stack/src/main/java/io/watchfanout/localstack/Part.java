package io.watchfanout.localstack;

import java.nio.file.Path;
import java.util.OptionalInt;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One process of the local stack, as the status table shows it and the shutdown stops it.
 *
 * @param name e.g. {@code fanout-node}
 * @param address what clients connect to, e.g. {@code http://127.0.0.1:8081}
 * @param pid the operating-system process id (valid once started)
 * @param alive whether the process runs
 * @param exitCode the exit code once it ended, if known
 * @param log the file with the process's stdout and stderr
 * @param stop stops the process (SIGTERM, then SIGKILL after its timeout) and waits for it
 */
record Part(
        String name,
        String address,
        LongSupplier pid,
        BooleanSupplier alive,
        Supplier<OptionalInt> exitCode,
        Path log,
        Runnable stop) {

    /** The pid, or -1 if the process never started. */
    long pidOrMinusOne() {
        try {
            return pid.getAsLong();
        } catch (IllegalStateException e) {
            return -1;
        }
    }
}
