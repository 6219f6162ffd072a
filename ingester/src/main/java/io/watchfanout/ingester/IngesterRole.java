package io.watchfanout.ingester;

import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.ingester.ops.OpsServer;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;

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

    /**
     * Opens the operations endpoints {@code operations} describes (over HTTPS with its TLS
     * files, if any) and logs where they listen: the one way both roles do it.
     *
     * @throws OpsServer.CannotListenException if the address is taken
     * @throws io.watchfanout.common.tls.TlsMaterialException if the TLS files cannot be used
     */
    static OpsServer openOperationsEndpoints(
            IngesterConfig.Operations operations,
            CollectorRegistry registry,
            Supplier<String> notReadyReason,
            Supplier<String> notLiveReason,
            Logger log) {
        ServerTls tls = operations.tls() == null ? null : ServerTls.load(operations.tls());
        OpsServer ops =
                new OpsServer(operations.host(), operations.port(), registry, notReadyReason, notLiveReason, tls);
        log.info(
                "operations endpoints on {}://{}:{} (/metrics, /readyz, /livez){}",
                tls == null ? "http" : "https",
                operations.host(),
                ops.port(),
                tls == null ? "" : ", " + tls);
        return ops;
    }

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
