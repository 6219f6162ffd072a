package io.watchfanout.ingester;

import java.time.Duration;

/**
 * What a process started by {@link IngesterMain} runs: the {@link Ingester} (the publisher, with
 * or without the state materializer beside it) or, with {@code --no-publisher}, the
 * {@link MaterializerProcess} alone. Both have operations endpoints, run until closed or until
 * they stop for good, and then say why.
 */
interface IngesterRole extends AutoCloseable {
    /**
     * Starts the operations endpoints, unless disabled or already started: separately from
     * {@link #start()}, so that a taken port fails before anything else runs.
     *
     * @throws io.watchfanout.ingester.ops.OpsServer.CannotListenException if the address is taken
     * @throws io.watchfanout.common.tls.TlsMaterialException if the TLS files cannot be used
     */
    void startOperationsEndpoints();

    /** Starts the work (and the endpoints, if not yet). */
    void start();

    /**
     * Waits until the work stops (after {@link #close} or a fatal error).
     *
     * @return false when the timeout passed first
     */
    boolean awaitStop(Duration timeout) throws InterruptedException;

    /** Empty unless the process stopped for good, else why. */
    String fatalReason();

    /** Stops the work and the endpoints; waits up to 20 s. */
    @Override
    void close();
}
