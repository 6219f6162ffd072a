package io.watchfanout.ingester;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.hotspot.DefaultExports;
import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.tls.TlsMaterialException;
import io.watchfanout.ingester.ops.OpsServer;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Command line of the ingester ({@code java -jar ingester.jar}); its flags are {@link IngesterFlags}.
 * With {@code --no-publisher} the process runs only the state materializer ({@link MaterializerProcess}).
 * Every flag also reads from {@code WATCHFANOUT_<FLAG_NAME>}. Exit codes: 0 after SIGTERM, 1 when the ingester
 * stopped on a fatal error (fenced, misconfigured topics, oversize event), 2 for bad flags.
 */
@Command(
        name = "ingester",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        modelTransformer = IngesterFlags.class,
        description = "Watches etcd and publishes its changes, in revision order and exactly once, to Kafka.",
        footer = "%nEvery flag also reads from the environment variable WATCHFANOUT_<FLAG_NAME>, "
                + "e.g. WATCHFANOUT_KAFKA_BOOTSTRAP. Durations: 500ms, 5s, 10m, 2h, 7d. Sizes: bytes or KiB/MiB/GiB "
                + "(also Ki/Mi/Gi).")
public final class IngesterMain implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(IngesterMain.class);
    /** How often the main thread looks whether the ingester stopped; only the exit status waits on it. */
    private static final Duration STOP_POLL = Duration.ofSeconds(1);

    /** Parses flags, runs until SIGTERM or a fatal error, and exits. */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The picocli command line with environment defaults and exit codes set. */
    public static CommandLine commandLine() {
        return new CommandLine(new IngesterMain()).setDefaultValueProvider(new EnvironmentDefaults());
    }

    /** Builds the configuration from the parsed flags ({@link IngesterFlags}); checks their ranges. */
    IngesterConfig config() {
        return IngesterFlags.config(spec);
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        IngesterConfig config = config();
        DefaultExports.initialize();
        IngesterRole ingester = config.roles().publisher()
                ? new Ingester(config, CollectorRegistry.defaultRegistry)
                : new MaterializerProcess(config, CollectorRegistry.defaultRegistry);
        try {
            ingester.startOperationsEndpoints();
        } catch (OpsServer.CannotListenException e) {
            // A taken port is the user's to fix, not a bug: one line naming the flag, no stack trace.
            ingester.close();
            spec.commandLine()
                    .getErr()
                    .println("ingester: --http-host/--http-port: " + e.getMessage()
                            + " (expected: a free port; --http-port 0 picks one, -1 disables the endpoints)");
            spec.commandLine().getErr().flush();
            return 1;
        } catch (TlsMaterialException e) {
            // A missing or bad certificate: the message names the flag and the file.
            ingester.close();
            spec.commandLine().getErr().println("ingester: " + e.getMessage());
            spec.commandLine().getErr().flush();
            return 1;
        }
        Thread hook = new Thread(
                () -> {
                    log.info("stopping (signal received)");
                    ingester.close();
                },
                "shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        ingester.start();
        while (!ingester.awaitStop(STOP_POLL)) {
            // runs until the shutdown hook or a fatal error stops the publisher
        }
        if (!ingester.fatalReason().isEmpty()) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                return 0; // already shutting down
            }
            ingester.close();
            return 1;
        }
        return 0;
    }
}
