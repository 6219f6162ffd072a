package io.watchfanout.kube.kafka.streams;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.watchfanout.common.Check;
import io.watchfanout.common.CommonFlags;
import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.Flag;
import io.watchfanout.common.FlagTable;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.kube.kafka.KubeEventDecoder;
import io.watchfanout.kube.kafka.KubeFlags;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Command line of the Kubernetes topics application ({@link KubeTopicsApp}): reads
 * {@code <prefix>.events} and writes Kubernetes watch events per resource until SIGTERM, then
 * commits and stops. Serves {@code GET /readyz} (200 while Kafka Streams runs) and
 * {@code GET /metrics} ({@link KubeTopicsMetrics}, Prometheus text) on {@code --http-host}
 * (every interface by default) and {@code --http-port}. Every
 * flag also reads from {@code WATCHFANOUT_<FLAG_NAME>}. Exit codes: 0 after SIGTERM, 1 when the
 * address cannot be bound, 2 for bad flags.
 */
@Command(
        name = "kube-topics",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        modelTransformer = KubeTopicsMain.Flags.class,
        version = "watch-fanout kube-topics 0.1.0",
        description = "Publishes the Kubernetes objects of the events topic as watch events: a change topic "
                + "<prefix>.k8s.<resource> and a compacted latest-object topic <prefix>.k8s-latest.<resource> per "
                + "resource, and <prefix>.k8s-errors for values that cannot be decoded.",
        footer = {
            "",
            "Every flag also reads from the environment variable WATCHFANOUT_<FLAG_NAME>, for example "
                    + "WATCHFANOUT_KAFKA_BOOTSTRAP."
        })
public final class KubeTopicsMain implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(KubeTopicsMain.class);

    /** The application's flags, defined once; picocli makes them through {@code @Command(modelTransformer)}. */
    public static final class Flags extends FlagTable {
        static final Flag<String> KAFKA_BOOTSTRAP =
                CommonFlags.kafkaBootstrap().required().help("Kafka bootstrap servers, e.g. 127.0.0.1:9092.");
        static final Flag<KafkaClientSettings> KAFKA_CONFIG =
                CommonFlags.kafkaConfig().help("Kafka client settings (security) for every client of the application.");
        static final Flag<String> TOPIC_PREFIX = CommonFlags.topicPrefix()
                .defaultValue("watchfanout")
                .help("Reads <NAME>.events; writes <NAME>.k8s.*, <NAME>.k8s-latest.* and <NAME>.k8s-errors.");
        static final Flag<String> ETCD_PREFIX = KubeFlags.etcdPrefix();
        static final Flag<Integer> PARTITIONS = Flag.integer("--partitions", "N")
                .defaultValue("1")
                .unit("partitions")
                .check(Check.atLeast(1))
                .help(
                        "Partitions of each topic created (objects are keyed namespace/name, so per-object order holds).");
        static final Flag<Integer> REPLICATION_FACTOR = Flag.integer("--replication-factor", "N")
                .defaultValue("1")
                .unit("replicas")
                .check(Check.between(1, Short.MAX_VALUE))
                .help("Replicas of each topic created, and of the application's internal topics.");
        static final Flag<Boolean> PUBLISH_SECRETS = Flag.toggle("--publish-secrets")
                .defaultValue("false")
                .help("Publish Secrets' data and stringData values. Off: they are replaced by empty strings. On: "
                        + "anyone who can read the topics reads every Secret of the cluster.");
        static final Flag<List<String>> INCLUDE = Flag.list("--include", "RESOURCES", null)
                .defaultText("every resource")
                .unit("resources, comma-separated (pods, deployments.apps)")
                .help("Publish only these resources.");
        static final Flag<List<String>> EXCLUDE = Flag.list("--exclude", "RESOURCES", null)
                .defaultText("none")
                .unit("resources, comma-separated (events, leases.coordination.k8s.io)")
                .help("Do not publish these resources.");
        static final Flag<Integer> HTTP_PORT = Flag.integer("--http-port", "PORT")
                .defaultValue("8095")
                .unit("TCP port")
                .check(Check.between(-1, 65535))
                .help("Port of /readyz and /metrics; 0 picks a free one, -1 disables them.");
        static final Flag<String> HTTP_HOST = Flag.text("--http-host", "ADDRESS")
                .defaultValue("0.0.0.0")
                .unit("IP address")
                .help("Address of /readyz and /metrics (0.0.0.0: every interface).");

        /** The table in {@code --help}'s order. */
        public Flags() {
            super(
                    DefaultStyle.SENTENCE,
                    KAFKA_BOOTSTRAP,
                    KAFKA_CONFIG,
                    TOPIC_PREFIX,
                    ETCD_PREFIX,
                    PARTITIONS,
                    REPLICATION_FACTOR,
                    PUBLISH_SECRETS,
                    INCLUDE,
                    EXCLUDE,
                    HTTP_PORT,
                    HTTP_HOST);
        }
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Parses the flags and runs until SIGTERM.
     *
     * @param args the command-line arguments
     */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The picocli command line with environment defaults. */
    public static CommandLine commandLine() {
        return new CommandLine(new KubeTopicsMain()).setDefaultValueProvider(new EnvironmentDefaults());
    }

    @Override
    public Integer call() throws InterruptedException {
        FlagTable.Values v = new Flags().values(spec);
        KafkaClientSettings settings = v.get(Flags.KAFKA_CONFIG);
        KubeTopicsApp app = new KubeTopicsApp(
                v.get(Flags.KAFKA_BOOTSTRAP),
                settings == null ? KafkaClientSettings.NONE : settings,
                v.get(Flags.TOPIC_PREFIX),
                v.get(Flags.ETCD_PREFIX),
                v.get(Flags.PARTITIONS),
                v.get(Flags.REPLICATION_FACTOR).shortValue(),
                v.get(Flags.PUBLISH_SECRETS)
                        ? KubeEventDecoder.SecretPolicy.PUBLISH
                        : KubeEventDecoder.SecretPolicy.REDACT,
                ResourceFilter.of(v.get(Flags.INCLUDE), v.get(Flags.EXCLUDE)),
                null);
        HttpServer ops = null;
        int port = v.get(Flags.HTTP_PORT);
        if (port >= 0) {
            try {
                ops = opsServer(app, v.get(Flags.HTTP_HOST), port);
            } catch (IOException e) {
                app.close();
                spec.commandLine()
                        .getErr()
                        .println(
                                "kube-topics: --http-host/--http-port: " + e.getMessage()
                                        + " (expected: a local address and a free port; port 0 picks one, -1 disables the endpoints)");
                spec.commandLine().getErr().flush();
                return 1;
            }
        }
        if (v.get(Flags.PUBLISH_SECRETS)) {
            LOG.warn("--publish-secrets: Secrets' values are published; whoever reads the topics reads them");
        }
        CountDownLatch stopped = new CountDownLatch(1);
        HttpServer server = ops;
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            LOG.info("stopping (signal received)");
                            app.close();
                            if (server != null) {
                                server.stop(0);
                            }
                            stopped.countDown();
                        },
                        "shutdown"));
        app.start();
        stopped.await();
        return 0;
    }

    /**
     * {@code /readyz} and {@code /metrics} on {@code host:port}.
     *
     * @param host a local IP address or name, {@code 0.0.0.0} for every interface
     * @param port the TCP port, 0 for a free one
     * @throws IOException when the address cannot be bound (taken port, address not local)
     */
    static HttpServer opsServer(KubeTopicsApp app, String host, int port) throws IOException {
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new IOException("cannot resolve " + host);
        }
        HttpServer server = HttpServer.create(address, 16);
        server.createContext("/readyz", ex -> {
            boolean ready = app.ready();
            respond(ex, ready ? 200 : 503, ready ? "ok\n" : "not ready: " + app.state() + "\n", "text/plain");
        });
        server.createContext(
                "/metrics",
                ex -> respond(
                        ex,
                        200,
                        app.metrics().prometheusText(System.currentTimeMillis()),
                        "text/plain; version=0.0.4"));
        server.start();
        LOG.info("serving /readyz and /metrics on {}", server.getAddress());
        return server;
    }

    private static void respond(HttpExchange ex, int status, String body, String type) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type + "; charset=utf-8");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }
}
