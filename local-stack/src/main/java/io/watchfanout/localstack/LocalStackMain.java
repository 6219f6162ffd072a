package io.watchfanout.localstack;

import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.FlagTable;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Command line of {@code bin/local-stack} ({@code java -jar local-stack/target/local-stack.jar}):
 * etcd, Kafka (one KRaft broker, or a replicated cluster with {@code --kafka-brokers 3}), the
 * ingester, the Kubernetes topics application and the fan-out nodes on loopback, until
 * Ctrl-C or SIGTERM. Every flag also reads from {@code WATCHFANOUT_<FLAG_NAME>}. Exit codes: 1
 * when the stack could not start, 2 for bad flags; after Ctrl-C or SIGTERM the JVM's own (130,
 * 143).
 */
@Command(
        name = "local-stack",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        modelTransformer = StackFlags.class,
        version = "watch-fanout local stack 0.1.0",
        description =
                "Runs etcd, Kafka (one KRaft broker, or a replicated cluster with --kafka-brokers 3), the ingester, "
                        + "the Kubernetes topics application and two fan-out nodes on 127.0.0.1, "
                        + "waits until every part is ready, prints their addresses, and stops all of them on Ctrl-C or SIGTERM.",
        footer = {
            "",
            "Every flag also reads from the environment variable WATCHFANOUT_<FLAG_NAME>, for example "
                    + "WATCHFANOUT_ETCD_PORT. Other WATCHFANOUT_* variables reach the ingester and the fan-out nodes, "
                    + "for example WATCHFANOUT_BOOKMARK_INTERVAL=1s.",
            "Durations: 500ms, 5s, 10m.",
            "Exit status: 1 if the stack could not start, 2 on bad flags; 130 or 143 after Ctrl-C or SIGTERM."
        })
public final class LocalStackMain implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /**
     * Parses the flags, runs the stack until Ctrl-C or SIGTERM, and exits.
     *
     * @param args the command-line arguments
     */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * The picocli command line with {@code WATCHFANOUT_*} environment defaults.
     *
     * @return a new command line
     */
    public static CommandLine commandLine() {
        return new CommandLine(new LocalStackMain()).setDefaultValueProvider(new EnvironmentDefaults());
    }

    /** Builds the validated configuration from the parsed flags ({@link StackFlags}). */
    StackConfig config() {
        FlagTable.Values v = new StackFlags().values(spec);
        Path root = projectRoot();
        int etcdPort = v.get(StackFlags.ETCD_PORT);
        int kafkaPort = v.get(StackFlags.KAFKA_PORT);
        Integer etcdPeerPort = v.get(StackFlags.ETCD_PEER_PORT);
        Integer kafkaControllerPort = v.get(StackFlags.KAFKA_CONTROLLER_PORT);
        Path ingesterJar = v.get(StackFlags.INGESTER_JAR);
        Path fanoutNodeJar = v.get(StackFlags.FANOUT_NODE_JAR);
        Path kubeTopicsJar = v.get(StackFlags.KUBE_TOPICS_JAR);
        boolean kubeTopics = v.get(StackFlags.KUBE_TOPICS);
        int kubeTopicsPort = v.get(StackFlags.KUBE_TOPICS_PORT);
        int brokers = v.get(StackFlags.KAFKA_BROKERS);
        int ingesterPort = v.get(StackFlags.INGESTER_PORT);
        List<Integer> fanoutPorts = v.get(StackFlags.FANOUT_PORTS);
        List<Integer> fanoutEtcdPorts = v.get(StackFlags.FANOUT_ETCD_PORTS);
        int balancerPort = v.get(StackFlags.BALANCER_PORT);
        int balancerEtcdPort = v.get(StackFlags.BALANCER_ETCD_PORT);
        // The ports the user gave stay where they are; every other one goes where it is nobody's.
        DefaultPorts ports = new DefaultPorts();
        boolean etcdGiven = given(StackFlags.ETCD_PORT);
        boolean kafkaGiven = given(StackFlags.KAFKA_PORT);
        boolean ingesterGiven = given(StackFlags.INGESTER_PORT);
        boolean kubeTopicsGiven = given(StackFlags.KUBE_TOPICS_PORT);
        boolean fanoutGiven = given(StackFlags.FANOUT_PORTS);
        boolean fanoutEtcdGiven = given(StackFlags.FANOUT_ETCD_PORTS);
        boolean balancerGiven = given(StackFlags.BALANCER_PORT);
        boolean balancerEtcdGiven = given(StackFlags.BALANCER_ETCD_PORT);
        if (etcdGiven) {
            ports.given(List.of(etcdPort));
        }
        if (etcdPeerPort != null) {
            ports.given(List.of(etcdPeerPort));
        }
        if (kafkaGiven) {
            ports.given(DefaultPorts.spaced(kafkaPort, brokers));
        }
        if (kafkaControllerPort != null) {
            ports.given(DefaultPorts.spaced(kafkaControllerPort, brokers));
        }
        if (ingesterGiven) {
            ports.given(List.of(ingesterPort));
        }
        if (kubeTopics && kubeTopicsGiven) {
            ports.given(List.of(kubeTopicsPort));
        }
        if (fanoutGiven) {
            ports.given(fanoutPorts);
        }
        if (fanoutEtcdGiven) {
            ports.given(fanoutEtcdPorts);
        }
        if (balancerGiven) {
            ports.given(List.of(balancerPort));
        }
        if (balancerEtcdGiven) {
            ports.given(List.of(balancerEtcdPort));
        }
        // The ports clients use first, then those derived from them (--kafka-port + 1, --etcd-port + 1).
        etcdPort = etcdGiven ? etcdPort : ports.place(etcdPort, 1);
        kafkaPort = kafkaGiven ? kafkaPort : ports.place(kafkaPort, brokers);
        ingesterPort = ingesterGiven ? ingesterPort : ports.place(ingesterPort, 1);
        if (kubeTopics && !kubeTopicsGiven) {
            kubeTopicsPort = ports.place(kubeTopicsPort, 1);
        }
        fanoutPorts = fanoutGiven
                ? fanoutPorts
                : fanoutPorts.stream().map(p -> ports.place(p, 1)).toList();
        fanoutEtcdPorts = fanoutEtcdGiven ? fanoutEtcdPorts : placeFanoutEtcdPorts(ports, fanoutEtcdPorts, fanoutPorts);
        kafkaControllerPort = kafkaControllerPort != null ? kafkaControllerPort : ports.place(kafkaPort + 1, brokers);
        etcdPeerPort = etcdPeerPort != null ? etcdPeerPort : ports.place(etcdPort + 1, 1);
        // Last: a user's --etcd-port 23790 keeps etcd's peer next to it, and the balancer moves.
        balancerPort = balancerGiven ? balancerPort : ports.place(balancerPort, 1);
        balancerEtcdPort = balancerEtcdGiven ? balancerEtcdPort : ports.place(balancerEtcdPort, 1);
        try {
            return new StackConfig(
                    etcdPort,
                    etcdPeerPort,
                    kafkaPort,
                    kafkaControllerPort,
                    brokers,
                    ingesterPort,
                    kubeTopicsPort,
                    fanoutPorts,
                    fanoutEtcdPorts,
                    balancerPort,
                    balancerEtcdPort,
                    Optional.ofNullable(v.get(StackFlags.DATA_DIR)),
                    v.get(StackFlags.TOPIC_PREFIX),
                    v.get(StackFlags.DEMO),
                    v.get(StackFlags.DEMO_RATE),
                    kubeTopics,
                    v.get(StackFlags.SECURE),
                    v.get(StackFlags.START_TIMEOUT),
                    ingesterJar != null ? ingesterJar : root.resolve("ingester/target/ingester.jar"),
                    fanoutNodeJar != null ? fanoutNodeJar : root.resolve("fanout-node/target/fanout-node.jar"),
                    kubeTopicsJar != null ? kubeTopicsJar : root.resolve("kube-kafka/target/kube-topics.jar"));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /**
     * One etcd API port per fan-out node when {@code --fanout-etcd-ports} was not given: the
     * defaults first, then for more nodes the ports after the last default, each moved off any
     * port taken.
     */
    private static List<Integer> placeFanoutEtcdPorts(
            DefaultPorts ports, List<Integer> defaults, List<Integer> fanoutPorts) {
        List<Integer> placed = new ArrayList<>();
        int next = defaults.get(0);
        for (int i = 0; i < fanoutPorts.size(); i++) {
            next = i < defaults.size() ? defaults.get(i) : next + 1;
            next = ports.place(next, 1);
            placed.add(next);
        }
        return placed;
    }

    /** Whether the user gave {@code flag}: on the command line, or in its {@code WATCHFANOUT_*} variable. */
    private boolean given(io.watchfanout.common.Flag<?> flag) {
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        if (parsed != null && parsed.hasMatchedOption(flag.name())) {
            return true;
        }
        return spec.defaultValueProvider() instanceof EnvironmentDefaults env && env.variable(flag.name()) != null;
    }

    @Override
    public Integer call() {
        StackConfig config = config();
        List<Path> jars = new ArrayList<>(List.of(config.ingesterJar(), config.fanoutNodeJar()));
        if (config.kubeTopics()) {
            jars.add(config.kubeTopicsJar());
        }
        for (Path jar : jars) {
            if (!Files.isRegularFile(jar)) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        jar + " does not exist (expected: a built jar;"
                                + " run 'mvn -B -DskipTests package' in the project root, or start the stack with bin/local-stack,"
                                + " which builds what is missing)");
            }
        }
        StackDirectory dir;
        try {
            dir = StackDirectory.open(config.dataDir());
            dir.checkKafkaBrokers(config.kafkaBrokers());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        } catch (UncheckedIOException e) {
            spec.commandLine().getErr().println("local stack failed to start: " + e.getMessage());
            return 1;
        }
        // Before the first logger exists: logback.xml writes the launcher's log there.
        System.setProperty(LocalStack.LOG_FILE_PROPERTY, dir.launcherLog().toString());
        return new LocalStack(config, dir, launcherClasspath(), System.out).run();
    }

    /**
     * The directory holding this project's modules: three levels above {@code local-stack.jar}
     * ({@code <root>/local-stack/target/local-stack.jar}) or above {@code target/classes}.
     */
    static Path projectRoot() {
        Path location = ownLocation();
        Path root = location.getParent() != null && location.getParent().getParent() != null
                ? location.getParent().getParent().getParent()
                : null;
        return root != null ? root : Path.of("").toAbsolutePath();
    }

    /**
     * The class path of the Kafka broker child JVM: this jar, whose manifest {@code Class-Path}
     * lists {@code lib/*.jar} (kafka_2.13 among them); when not run from the jar (an IDE, a
     * test), this JVM's class path.
     */
    static String launcherClasspath() {
        Path location = ownLocation();
        if (Files.isRegularFile(location) && location.toString().endsWith(".jar")) {
            return location.toString();
        }
        return System.getProperty("java.class.path");
    }

    private static Path ownLocation() {
        try {
            return Path.of(LocalStackMain.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toAbsolutePath()
                    .normalize();
        } catch (URISyntaxException | RuntimeException e) {
            return Path.of("").toAbsolutePath();
        }
    }
}
