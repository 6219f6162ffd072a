package io.watchfanout.localstack;

import io.watchfanout.common.DurationConverter;
import io.watchfanout.common.EnvironmentDefaults;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Command line of {@code bin/local-stack} ({@code java -jar local-stack/target/local-stack.jar}):
 * etcd, Kafka (one KRaft broker, or a replicated cluster with {@code --kafka-brokers 3}), the
 * ingester and the fan-out nodes on loopback, until
 * Ctrl-C or SIGTERM. Every flag also reads from {@code WATCHFANOUT_<FLAG_NAME>}. Exit codes: 1
 * when the stack could not start, 2 for bad flags; after Ctrl-C or SIGTERM the JVM's own (130,
 * 143).
 */
@Command(name = "local-stack", mixinStandardHelpOptions = true, sortOptions = false,
    version = "watch-fanout local stack 0.1.0",
    description = "Runs etcd, Kafka (one KRaft broker, or a replicated cluster with --kafka-brokers 3), the ingester "
        + "and two fan-out nodes on 127.0.0.1, "
        + "waits until every part is ready, prints their addresses, and stops all of them on Ctrl-C or SIGTERM.",
    footer = {"",
        "Every flag also reads from the environment variable WATCHFANOUT_<FLAG_NAME>, for example "
            + "WATCHFANOUT_ETCD_PORT. Other WATCHFANOUT_* variables reach the ingester and the fan-out nodes, "
            + "for example WATCHFANOUT_BOOKMARK_INTERVAL=1s.",
        "Durations: 500ms, 5s, 10m.",
        "Exit status: 1 if the stack could not start, 2 on bad flags; 130 or 143 after Ctrl-C or SIGTERM."})
public final class LocalStackMain implements Callable<Integer> {
  @Option(names = "--etcd-port", defaultValue = "2379", paramLabel = "PORT",
      description = "etcd client port: http://127.0.0.1:PORT. Default: ${DEFAULT-VALUE}.")
  int etcdPort;

  @Option(names = "--etcd-peer-port", paramLabel = "PORT",
      description = "etcd peer (Raft) port. Default: --etcd-port + 1.")
  Integer etcdPeerPort;

  @Option(names = "--kafka-port", defaultValue = "9092", paramLabel = "PORT",
      description = "Kafka bootstrap port: 127.0.0.1:PORT; broker N of --kafka-brokers listens on PORT + 2(N-1). "
          + "Default: ${DEFAULT-VALUE}.")
  int kafkaPort;

  @Option(names = "--kafka-controller-port", paramLabel = "PORT",
      description = "Kafka KRaft controller port; broker N of --kafka-brokers uses PORT + 2(N-1). "
          + "Default: --kafka-port + 1.")
  Integer kafkaControllerPort;

  @Option(names = "--kafka-brokers", defaultValue = "1", paramLabel = "N",
      description = "Kafka brokers: 1, or 3 to 5 for a replicated cluster as production runs it (every broker also "
          + "a KRaft controller; topics with replication factor 3 and min.insync.replicas 2). Default: ${DEFAULT-VALUE}.")
  int kafkaBrokers;

  @Option(names = "--ingester-port", defaultValue = "9100", paramLabel = "PORT",
      description = "Ingester HTTP port (/metrics, /readyz, /livez). Default: ${DEFAULT-VALUE}.")
  int ingesterPort;

  @Option(names = "--fanout-ports", defaultValue = "8081,8082", split = ",", paramLabel = "PORTS",
      description = "HTTP ports of the fan-out nodes, comma-separated; one node per port. Default: ${DEFAULT-VALUE}.")
  List<Integer> fanoutPorts;

  @Option(names = "--fanout-etcd-ports", defaultValue = "23791,23792", split = ",", paramLabel = "PORTS",
      description = "Ports of the fan-out nodes' etcd v3 API (gRPC: etcdctl, jetcd, clientv3), one per --fanout-ports "
          + "entry, in the same order. Default: ${DEFAULT-VALUE}.")
  List<Integer> fanoutEtcdPorts;

  @Option(names = "--data-dir", paramLabel = "DIR",
      description = "Keep the data of etcd and Kafka, and the logs, in DIR; a restart on the same DIR resumes. "
          + "Default: a new temporary directory, removed at exit.")
  Path dataDir;

  @Option(names = "--topic-prefix", defaultValue = "watch", paramLabel = "NAME",
      description = "Kafka topics are NAME.events and NAME.state. Default: ${DEFAULT-VALUE}.")
  String topicPrefix;

  @Option(names = "--demo", defaultValue = "false", fallbackValue = "true", arity = "0..1", paramLabel = "BOOL",
      description = "Also run a load generator writing Kubernetes-like objects under /registry/. "
          + "Default: ${DEFAULT-VALUE}.")
  boolean demo;

  @Option(names = "--demo-rate", defaultValue = "20", paramLabel = "N",
      description = "Writes per second of --demo (etcd operations, a transaction counts once). "
          + "Default: ${DEFAULT-VALUE}.")
  int demoRate;

  @Option(names = "--start-timeout", defaultValue = "120s", converter = DurationConverter.class,
      paramLabel = "DURATION", description = "How long each part may take to become ready. Default: ${DEFAULT-VALUE}.")
  Duration startTimeout;

  @Option(names = "--ingester-jar", paramLabel = "FILE",
      description = "The ingester's jar. Default: ingester/target/ingester.jar of this project.")
  Path ingesterJar;

  @Option(names = "--fanout-node-jar", paramLabel = "FILE",
      description = "The fan-out node's jar. Default: fanout-node/target/fanout-node.jar of this project.")
  Path fanoutNodeJar;

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

  /** Builds the validated configuration from the parsed flags. */
  StackConfig config() {
    Path root = projectRoot();
    try {
      return new StackConfig(etcdPort, etcdPeerPort != null ? etcdPeerPort : etcdPort + 1, kafkaPort,
          kafkaControllerPort != null ? kafkaControllerPort : kafkaPort + 1, kafkaBrokers, ingesterPort, fanoutPorts,
          fanoutEtcdPorts,
          Optional.ofNullable(dataDir), topicPrefix, demo, demoRate, startTimeout,
          ingesterJar != null ? ingesterJar : root.resolve("ingester/target/ingester.jar"),
          fanoutNodeJar != null ? fanoutNodeJar : root.resolve("fanout-node/target/fanout-node.jar"));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  @Override
  public Integer call() {
    StackConfig config = config();
    for (Path jar : List.of(config.ingesterJar(), config.fanoutNodeJar())) {
      if (!Files.isRegularFile(jar)) {
        throw new CommandLine.ParameterException(spec.commandLine(), jar + " does not exist (expected: a built jar;"
            + " run 'mvn -B -DskipTests package' in the project root, or start the stack with bin/local-stack,"
            + " which builds what is missing)");
      }
    }
    StackDirectory dir = StackDirectory.open(config.dataDir());
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
        ? location.getParent().getParent().getParent() : null;
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
      return Path.of(LocalStackMain.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .toAbsolutePath().normalize();
    } catch (URISyntaxException | RuntimeException e) {
      return Path.of("").toAbsolutePath();
    }
  }
}
