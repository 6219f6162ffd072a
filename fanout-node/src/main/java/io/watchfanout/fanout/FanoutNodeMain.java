package io.watchfanout.fanout;

import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.tls.TlsMaterialException;
import io.watchfanout.fanout.security.SecuritySetupException;
import io.watchfanout.fanout.transport.HttpApi;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The fan-out node's command line (README.md, "Command line"):
 * {@code java -jar fanout-node.jar --kafka-bootstrap HOSTS --topic-prefix NAME --port PORT}.
 * Every flag also reads from {@code WATCHFANOUT_<FLAG_NAME>} (e.g. {@code --kafka-bootstrap}
 * from {@code WATCHFANOUT_KAFKA_BOOTSTRAP}, by the project's {@link EnvironmentDefaults}); a
 * flag on the command line wins over the environment, which wins over the default in
 * {@link NodeFlags}, the one definition of every flag. Bad flags exit with status 2.
 */
@Command(
        name = "fanout-node",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        version = "watch-fanout fan-out node 0.1.0",
        defaultValueProvider = EnvironmentDefaults.class,
        modelTransformer = NodeFlags.class,
        description = {
            "Rebuilds a watch cache of an etcd range from Kafka (<prefix>.state, then <prefix>.events) and serves",
            "HTTP watch streams: GET /v1/watch, GET /v1/kv, /readyz, /livez, /metrics; with --etcd-api-port, etcd's v3 API.",
            "Every flag can also be set by the environment variable WATCHFANOUT_<FLAG_NAME>,",
            "e.g. WATCHFANOUT_KAFKA_BOOTSTRAP. Durations: 500ms, 5s, 10m, 2h, 7d."
        },
        footer = {"", "Exit status: 143 after SIGTERM (a graceful drain), 1 on a startup failure, 2 on bad flags."})
public final class FanoutNodeMain implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Builds the node configuration from the parsed flags ({@link NodeFlags}). */
    NodeConfig toConfig() {
        return NodeFlags.config(spec);
    }

    @Override
    public Integer call() throws Exception {
        NodeConfig config = toConfig();
        FanoutNode node;
        try {
            node = FanoutNode.start(config, NodeFlags.benchSettings(spec));
        } catch (HttpApi.CannotListenException e) {
            // A taken port is the user's to fix, not a bug: one line naming the flags, no stack trace.
            spec.commandLine()
                    .getErr()
                    .println("fanout-node: --bind-address/--port: " + e.getMessage()
                            + " (expected: a free port; --port 0 picks one)");
            spec.commandLine().getErr().flush();
            return 1;
        } catch (TlsMaterialException | SecuritySetupException e) {
            // A missing or bad certificate, token, key or policy file is the operator's to fix: one line
            // naming the flag and the file.
            spec.commandLine().getErr().println("fanout-node: " + e.getMessage());
            spec.commandLine().getErr().flush();
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                node.close();
                            } finally {
                                stopped.countDown();
                            }
                        },
                        "watchfanout-shutdown"));
        stopped.await();
        return 0;
    }

    /** Entry point of {@code java -jar fanout-node.jar}. */
    public static void main(String[] args) {
        // grpc-java logs through java.util.logging: into SLF4J, with the node's own lines and levels.
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        System.exit(new CommandLine(new FanoutNodeMain()).execute(args));
    }
}
