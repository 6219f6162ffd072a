package io.watchfanout.kube.kafka.cli;

import com.google.gson.JsonObject;
import io.watchfanout.common.CommonFlags;
import io.watchfanout.common.DurationConverter;
import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.Flag;
import io.watchfanout.common.FlagTable;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.kube.codec.select.LabelSelector;
import io.watchfanout.kube.codec.select.SelectorException;
import io.watchfanout.kube.kafka.DecodeResult;
import io.watchfanout.kube.kafka.KubeEventDecoder;
import io.watchfanout.kube.kafka.KubeFlags;
import io.watchfanout.kube.kafka.KubeWatchEvent;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.errors.TimeoutException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kube-events}: the changes of a cluster's objects read straight from the ingester's events
 * topic ({@code <prefix>.events}), as kubectl would show them, without the fan-out node or the
 * Kubernetes topics application. With {@code --at}, the objects of a resource as they were at a past
 * revision or time ({@link StateAt}).
 *
 * <p>Exit status: 0 when done (also when {@code --follow} is stopped), 1 on an error (one line on
 * stderr: an unknown resource, a revision the topic no longer holds, Kafka not answering), 2 on bad
 * flags (the message and the usage). Secrets' values are redacted
 * ({@link KubeEventDecoder.SecretPolicy#REDACT}).
 */
@Command(
        name = "kube-events",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        modelTransformer = KubeEventsMain.Flags.class,
        version = "watch-fanout kube-events 0.1.0",
        description = {
            "Prints the changes of a resource's objects from the events topic, like kubectl get --watch, "
                    + "or (--at) the objects as they were at a revision or time, like kubectl get.",
            "Without --since or --from-revision, every event the topic still holds."
        },
        footer = {
            "",
            "Examples:",
            "  kube-events pods -A --since 10m",
            "  kube-events deployments.apps -n team-a --from-revision 1200 -o json",
            "  kube-events pods -l app=web --follow",
            "  kube-events pods -A --at 2025-01-31T12:00:00Z",
            "",
            "The --kafka-*, --topic-prefix and --etcd-prefix flags also read from the environment variable "
                    + "WATCHFANOUT_<FLAG_NAME>, e.g. WATCHFANOUT_KAFKA_BOOTSTRAP."
        })
public final class KubeEventsMain implements Callable<Integer> {
    /** How long Kafka may take to answer a metadata or offsets request. */
    private static final Duration KAFKA_TIMEOUT = Duration.ofSeconds(30);

    /** The flags it shares with the other runnables, defined once; picocli makes them through {@code modelTransformer}. */
    public static final class Flags extends FlagTable {
        static final Flag<String> KAFKA_BOOTSTRAP = CommonFlags.kafkaBootstrap()
                .defaultValue("127.0.0.1:9092")
                .help("Kafka bootstrap servers; the default is bin/local-stack's Kafka.");
        static final Flag<KafkaClientSettings> KAFKA_CONFIG =
                CommonFlags.kafkaConfig().help("Kafka client settings (security) of the consumers.");
        static final Flag<String> TOPIC_PREFIX = CommonFlags.topicPrefix()
                .defaultValue("watch")
                .help("Reads <NAME>.events and, for --at, <NAME>.state; the default is bin/local-stack's.");
        static final Flag<String> ETCD_PREFIX = KubeFlags.etcdPrefix();

        /** The table in {@code --help}'s order. */
        public Flags() {
            super(DefaultStyle.SENTENCE, KAFKA_BOOTSTRAP, KAFKA_CONFIG, TOPIC_PREFIX, ETCD_PREFIX);
        }
    }

    @Parameters(
            index = "0",
            paramLabel = "RESOURCE",
            description = "The resource as kubectl takes it: pods, pod, po, deployments.apps, widgets.example.com.")
    String resource;

    @Option(
            names = {"-n", "--namespace"},
            paramLabel = "NAMESPACE",
            defaultValue = "default",
            description =
                    "The namespace of the objects (ignored for cluster-scoped resources). Default: ${DEFAULT-VALUE}.")
    String namespace;

    @Option(
            names = {"-A", "--all-namespaces"},
            description = "Objects of every namespace.")
    boolean allNamespaces;

    @Option(
            names = {"-l", "--selector"},
            paramLabel = "SELECTOR",
            description = "Label selector, as kubectl's: app=web,tier!=db, env in (a,b), !canary.")
    String selector;

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FORMAT",
            description = "name, json, yaml or wide; without it a table. json: events one a line as "
                    + "{\"type\":…,\"object\":{…}}, --at a kube List.")
    String output;

    @Option(
            names = "--since",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Start with the events received in the last DURATION (10m, 2h).")
    Duration since;

    @Option(names = "--from-revision", paramLabel = "N", description = "Start with the events of etcd revision N.")
    Long fromRevision;

    @Option(names = "--follow", description = "Keep printing new events until interrupted.")
    boolean follow;

    @Option(
            names = "--at",
            paramLabel = "REVISION|TIME",
            description = "Print the objects as they were at this etcd revision or RFC 3339 time "
                    + "(2025-01-31T12:00:00Z) instead of events.")
    String at;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Runs the command and exits with its status.
     *
     * @param args the command-line arguments
     */
    public static void main(String[] args) {
        // Before any logger exists: the jar's quiet logging, unless the user chose another.
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", "kube-events-logback.xml");
        }
        System.exit(commandLine(System.getenv()).execute(args));
    }

    /**
     * The command line, its table flags' defaults read from {@code environment}.
     *
     * @param environment the variables {@code WATCHFANOUT_<FLAG_NAME>} come from
     */
    public static CommandLine commandLine(Map<String, String> environment) {
        EnvironmentDefaults env = new EnvironmentDefaults(environment);
        List<String> shared = new Flags().flags().stream().map(Flag::name).toList();
        CommandLine cl = new CommandLine(new KubeEventsMain());
        // Only the shared flags read the environment: WATCHFANOUT_NAMESPACE must not narrow a listing unseen.
        cl.setDefaultValueProvider(
                arg -> arg instanceof CommandLine.Model.OptionSpec o && shared.contains(o.longestName())
                        ? env.defaultValue(arg)
                        : arg.defaultValue());
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("kube-events: " + message(e));
            line.getErr().flush();
            return 1;
        });
        return cl;
    }

    private static String message(Exception e) {
        if (e instanceof CliException) {
            return e.getMessage();
        }
        if (e instanceof TimeoutException) {
            return "Kafka did not answer in time: " + e.getMessage() + " (is --kafka-bootstrap right and Kafka up?)";
        }
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    @Override
    public Integer call() {
        FlagTable.Values v = new Flags().values(spec);
        Printer.Format format = Printer.Format.TABLE;
        if (output != null && (format = Printer.Format.parse(output)) == null) {
            throw usage("-o: '" + output + "' (expected: name, json, yaml or wide)");
        }
        LabelSelector labels;
        try {
            labels = selector == null ? LabelSelector.everything() : LabelSelector.parse(selector);
        } catch (SelectorException e) {
            throw usage("-l: " + e.getMessage());
        }
        if (since != null && fromRevision != null) {
            throw usage("--since and --from-revision each say where to start (expected: one of them)");
        }
        if (at != null && (since != null || fromRevision != null || follow)) {
            throw usage(
                    "--at prints the objects at one point (expected: no --since, --from-revision or --follow with it)");
        }
        if (fromRevision != null && fromRevision < 1) {
            throw usage("--from-revision: " + fromRevision + " (expected: a revision, >= 1)");
        }
        if (since != null && since.isNegative()) {
            throw usage("--since: " + DurationConverter.format(since) + " (expected: >= 0s)");
        }
        long atRevision = -1;
        Instant atTime = null;
        if (at != null) {
            try {
                atRevision = Long.parseLong(at);
            } catch (NumberFormatException notRevision) {
                try {
                    atTime = OffsetDateTime.parse(at).toInstant();
                } catch (DateTimeParseException notTime) {
                    throw usage("--at: '" + at + "' (expected: a revision or an RFC 3339 time, e.g. "
                            + "2025-01-31T12:00:00Z)");
                }
            }
            if (atTime == null && atRevision < 0) {
                throw usage("--at: " + atRevision + " (expected: a revision, >= 0)");
            }
        }

        Map<String, Object> config = consumerConfig(v.get(Flags.KAFKA_BOOTSTRAP), v.get(Flags.KAFKA_CONFIG));
        String topicPrefix = v.get(Flags.TOPIC_PREFIX);
        String etcdPrefix = v.get(Flags.ETCD_PREFIX);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        boolean terminal = System.console() != null;
        CatchUp.Factory progress = (what, offset) -> new CatchUp(err, terminal, what, offset);
        StateAt state = new StateAt(config, topicPrefix, etcdPrefix, KAFKA_TIMEOUT, progress);
        KubeEventDecoder decoder = new KubeEventDecoder(etcdPrefix, KubeEventDecoder.SecretPolicy.REDACT);
        String ns = allNamespaces ? null : namespace;
        Printer printer = new Printer(format, out, allNamespaces, Instant.now());

        if (at != null) {
            StateAt.Snapshot snapshot = state.at(atRevision, atTime);
            Selection selection =
                    new Selection(resolve(decoder, () -> snapshot.keyValues().values()), ns, labels);
            list(snapshot, decoder, selection, printer, err);
            return 0;
        }
        Selection selection =
                new Selection(resolve(decoder, () -> state.stored().values()), ns, labels);
        try (EventsTopic events = EventsTopic.open(config, WatchFanoutSerdes.eventsTopic(topicPrefix), KAFKA_TIMEOUT)) {
            long start = events.begin();
            if (fromRevision != null) {
                long oldest = events.firstRevision();
                if (events.begin() > 0 && oldest >= 0 && fromRevision < oldest) {
                    throw new CliException("revision " + fromRevision + " is older than the oldest revision "
                            + events.name() + " holds, " + oldest + " (retention removed the events before it)");
                }
                start = events.firstOffsetAbove(fromRevision - 1);
            } else if (since != null) {
                start = events.firstOffsetAt(Instant.now().minus(since));
            }
            new Tail(events, decoder, selection, printer, err).run(start, follow, progress.from(events.name(), start));
        }
        return 0;
    }

    /** Lists the selected objects of the snapshot, in key order (namespace, then name). */
    private static void list(
            StateAt.Snapshot snapshot,
            KubeEventDecoder decoder,
            Selection selection,
            Printer printer,
            PrintWriter err) {
        List<KubeWatchEvent> objects = new ArrayList<>();
        List<JsonObject> trees = new ArrayList<>();
        for (KeyValue kv : snapshot.keyValues().values()) {
            Optional<KubeResources.ObjectKey> key =
                    decoder.resources().parse(kv.getKey().toByteArray());
            if (key.isEmpty() || !key.get().resource().equals(selection.resource())) {
                continue;
            }
            // The stored key-value as the PUT that wrote it: the decoder renders it at its mod revision.
            DecodeResult r = decoder.decode(
                    EventsRecord.newBuilder()
                            .setEvent(Event.newBuilder()
                                    .setType(Event.Type.PUT)
                                    .setKv(kv)
                                    .setRevision(kv.getModRevision()))
                            .build(),
                    null);
            if (r instanceof DecodeResult.Undecodable u) {
                Tail.report(err, u);
            } else if (r instanceof DecodeResult.Decoded d && selection.matchesResource(d.event())) {
                JsonObject tree = Printer.tree(d.event().object());
                if (selection.matchesLabels(tree)) {
                    objects.add(d.event());
                    trees.add(tree);
                }
            }
        }
        if (objects.isEmpty()) {
            err.println("No resources found" + selection.where() + " at revision " + snapshot.revision() + ".");
            err.flush();
        }
        printer.list(snapshot.revision(), objects, trees);
    }

    /**
     * The resource the RESOURCE parameter names: a built-in one, else a custom resource of the
     * CRDs among {@code stored} (read only then).
     */
    private KubeResource resolve(KubeEventDecoder decoder, Supplier<Iterable<KeyValue>> stored) {
        Optional<KubeResource> r = ResourceNames.resolve(decoder.resources(), resource);
        if (r.isEmpty()) {
            stored.get().forEach(decoder::learn);
            r = ResourceNames.resolve(decoder.resources(), resource);
        }
        return r.orElseThrow(() -> new CliException("unknown resource type \"" + resource + "\" (expected: a "
                + "resource kubectl knows, e.g. pods, deployments.apps, or a custom resource whose "
                + "CustomResourceDefinition the state topic holds)"));
    }

    private static Map<String, Object> consumerConfig(String bootstrap, KafkaClientSettings settings) {
        Map<Object, Object> c = new HashMap<>();
        if (settings != null) {
            settings.applyTo(c);
        }
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "kube-events");
        c.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) KAFKA_TIMEOUT.toMillis());
        Map<String, Object> config = new HashMap<>();
        c.forEach((k, val) -> config.put(String.valueOf(k), val));
        return config;
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
