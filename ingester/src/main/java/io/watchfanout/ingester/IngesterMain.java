package io.watchfanout.ingester;

import com.google.protobuf.ByteString;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.hotspot.DefaultExports;
import io.watchfanout.ingester.ops.OpsServer;
import io.watchfanout.common.ByteSizeConverter;
import io.watchfanout.common.DurationConverter;
import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.EtcdEndpointConverter;
import io.watchfanout.common.KafkaBootstrapConverter;
import io.watchfanout.common.KeyBytes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Command line of the ingester ({@code java -jar ingester.jar}). Every flag also reads from
 * {@code WATCHFANOUT_<FLAG_NAME>}. Exit codes: 0 after SIGTERM, 1 when the ingester
 * stopped on a fatal error (fenced, misconfigured topics, oversize event), 2 for bad flags.
 */
@Command(name = "ingester", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Watches etcd and publishes its changes, in revision order and exactly once, to Kafka.",
    footer = "%nEvery flag also reads from the environment variable WATCHFANOUT_<FLAG_NAME>, "
        + "e.g. WATCHFANOUT_KAFKA_BOOTSTRAP. Durations: 500ms, 5s, 10m, 2h, 7d. Sizes: bytes or KiB/MiB/GiB "
        + "(also Ki/Mi/Gi).")
public final class IngesterMain implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(IngesterMain.class);

  @Option(names = "--etcd-endpoints", required = true, split = ",", paramLabel = "URLS",
      converter = EtcdEndpointConverter.class,
      description = "etcd client URLs, comma-separated, e.g. http://127.0.0.1:2379; host:port means http://host:port.")
  List<String> etcdEndpoints;

  @Option(names = "--kafka-bootstrap", required = true, paramLabel = "HOSTS", converter = KafkaBootstrapConverter.class,
      description = "Kafka bootstrap servers, e.g. 127.0.0.1:9092.")
  String kafkaBootstrap;

  @Option(names = "--topic-prefix", required = true, paramLabel = "NAME",
      description = "Topics are <NAME>.events and <NAME>.state.")
  String topicPrefix;

  @Option(names = "--key-prefix", defaultValue = "", paramLabel = "BYTES",
      description = "Publish only etcd keys with this prefix (percent-encoded bytes; %%00 is a zero byte). "
          + "Default: every key.")
  String keyPrefix;

  @Option(names = "--http-port", defaultValue = "9100", paramLabel = "PORT",
      description = "Port of /metrics, /readyz and /livez; 0 picks a free port, -1 disables. Default: ${DEFAULT-VALUE}.")
  int httpPort;

  @Option(names = "--http-host", defaultValue = "0.0.0.0", paramLabel = "ADDRESS",
      description = "Address of the operations endpoints. Default: ${DEFAULT-VALUE}.")
  String httpHost;

  @Option(names = "--transactional-id", paramLabel = "ID",
      description = "The ingester's identity in Kafka; a second ingester with the same id fences the first. "
          + "Default: <topic-prefix>.ingester.")
  String transactionalId;

  @Option(names = "--events-retention", defaultValue = "7d", converter = DurationConverter.class,
      paramLabel = "DURATION", description = "retention.ms of a newly created events topic. Default: ${DEFAULT-VALUE}.")
  Duration eventsRetention;

  @Option(names = "--max-record-bytes", defaultValue = "8MiB", converter = ByteSizeConverter.class,
      paramLabel = "SIZE", description = "Largest record (max.message.bytes of the topics); must hold etcd's "
          + "largest value twice (prev_kv). Default: ${DEFAULT-VALUE}.")
  int maxRecordBytes;

  @Option(names = "--state-partitions", defaultValue = "1", paramLabel = "N",
      description = "Partitions of a newly created state topic. Default: ${DEFAULT-VALUE}.")
  int statePartitions;

  @Option(names = "--replication-factor", defaultValue = "-1", paramLabel = "N",
      description = "Replication factor of newly created topics, and the least an existing topic must have "
          + "(the ingester refuses to start otherwise); -1 for the broker's default. Default: ${DEFAULT-VALUE}.")
  short replicationFactor;

  @Option(names = "--min-insync-replicas", defaultValue = "-1", paramLabel = "N",
      description = "min.insync.replicas of newly created topics, and the least an existing topic must have: "
          + "replicas that must hold a write before Kafka acknowledges it (the ingester writes with acks=all). "
          + "Production: 2 with --replication-factor 3. -1 for the broker's default. Default: ${DEFAULT-VALUE}.")
  int minInsyncReplicas;

  @Option(names = "--transaction-timeout", defaultValue = "60s", converter = DurationConverter.class,
      paramLabel = "DURATION", description = "transaction.timeout.ms: an open transaction stalls read_committed "
          + "readers for at most this long after a crash. Default: ${DEFAULT-VALUE}.")
  Duration transactionTimeout;

  @Option(names = "--watch-queue-bytes", defaultValue = "64MiB", converter = ByteSizeConverter.class,
      paramLabel = "SIZE", description = "Bound of etcd data waiting for Kafka; beyond it the watch is closed "
          + "and resumed later from the last published revision. Default: ${DEFAULT-VALUE}.")
  int watchQueueBytes;

  @Option(names = "--max-batch-records", defaultValue = "5000", paramLabel = "N",
      description = "Records per Kafka transaction before it is cut between two revisions. Default: ${DEFAULT-VALUE}.")
  int maxBatchRecords;

  @Option(names = "--etcd-max-inbound-bytes", defaultValue = "512MiB", converter = ByteSizeConverter.class,
      paramLabel = "SIZE", description = "Largest gRPC message accepted from etcd (a large transaction or a "
          + "catch-up arrives as one). Default: ${DEFAULT-VALUE}.")
  int etcdMaxInboundBytes;

  @Option(names = "--snapshot-page-size", defaultValue = "1000", paramLabel = "N",
      description = "Keys per etcd range request of an initial load or resync. Default: ${DEFAULT-VALUE}.")
  int snapshotPageSize;

  @Option(names = "--materializer", defaultValue = "true", negatable = true, fallbackValue = "true",
      description = "Run the state materializer (Kafka Streams) in this process. Default: ${DEFAULT-VALUE}.")
  boolean materializer;

  @Option(names = "--retry-backoff-max", defaultValue = "5s", converter = DurationConverter.class,
      paramLabel = "DURATION", description = "Longest wait between retries of etcd or Kafka. Default: ${DEFAULT-VALUE}.")
  Duration retryBackoffMax;

  @Option(names = "--leader-election", defaultValue = "false", negatable = true, fallbackValue = "true",
      description = "Elect one publishing replica through etcd's election API; the others wait. "
          + "Default: ${DEFAULT-VALUE}.")
  boolean leaderElection;

  @Option(names = "--election-name", paramLabel = "KEY",
      description = "etcd key prefix of the election. Default: /watchfanout/elections/<topic-prefix>/ingester.")
  String electionName;

  @Option(names = "--election-lease-ttl", defaultValue = "10s", converter = DurationConverter.class,
      paramLabel = "DURATION", description = "Lease time-to-live of the election: how long a dead leader "
          + "delays the next one. Default: ${DEFAULT-VALUE}.")
  Duration electionLeaseTtl;

  @Option(names = "--heartbeat-interval", defaultValue = "1s", converter = DurationConverter.class,
      paramLabel = "DURATION", description = "After this long without a record, publish a heartbeat (a progress "
          + "record at the last revision) so that fan-out nodes tell an idle etcd from a dead feed. "
          + "Default: ${DEFAULT-VALUE}.")
  Duration heartbeatInterval;

  @Option(names = "--dependency-timeout", defaultValue = "3s", converter = DurationConverter.class,
      paramLabel = "DURATION", description = "etcd and Kafka are probed every second; one that does not answer "
          + "within this makes the ingester not ready. Default: ${DEFAULT-VALUE}.")
  Duration dependencyTimeout;

  /** Parses flags, runs until SIGTERM or a fatal error, and exits. */
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The picocli command line with environment defaults and exit codes set. */
  public static CommandLine commandLine() {
    return new CommandLine(new IngesterMain()).setDefaultValueProvider(new EnvironmentDefaults());
  }

  /** Builds the configuration from the parsed flags; validates ranges. */
  IngesterConfig config() {
    require(statePartitions >= 1, "--state-partitions", statePartitions, ">= 1");
    require(maxBatchRecords >= 1, "--max-batch-records", maxBatchRecords, ">= 1");
    require(snapshotPageSize >= 1, "--snapshot-page-size", snapshotPageSize, ">= 1");
    require(httpPort >= -1 && httpPort <= 65535, "--http-port", httpPort, "-1..65535");
    require(maxRecordBytes >= 64 * 1024, "--max-record-bytes", maxRecordBytes, ">= 64KiB");
    require(electionLeaseTtl.toSeconds() >= 2, "--election-lease-ttl", DurationConverter.format(electionLeaseTtl),
        ">= 2s");
    require(heartbeatInterval.toMillis() >= 100, "--heartbeat-interval", DurationConverter.format(heartbeatInterval),
        ">= 100ms");
    require(dependencyTimeout.toMillis() >= 100, "--dependency-timeout", DurationConverter.format(dependencyTimeout),
        ">= 100ms");
    require(replicationFactor == -1 || replicationFactor >= 1, "--replication-factor", replicationFactor,
        "-1 or >= 1");
    require(minInsyncReplicas == -1 || minInsyncReplicas >= 1, "--min-insync-replicas", minInsyncReplicas,
        "-1 or >= 1");
    // More in-sync replicas than replicas: Kafka would refuse every acks=all write.
    require(replicationFactor == -1 || minInsyncReplicas <= replicationFactor, "--min-insync-replicas",
        minInsyncReplicas, "<= --replication-factor " + replicationFactor);
    byte[] prefix;
    try {
      prefix = KeyBytes.decode(keyPrefix);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(usageTarget(), "--key-prefix: " + e.getMessage());
    }
    return new IngesterConfig(List.copyOf(etcdEndpoints), kafkaBootstrap, topicPrefix, ByteString.copyFrom(prefix),
        httpHost, httpPort, transactionalId != null ? transactionalId : topicPrefix + ".ingester", eventsRetention,
        maxRecordBytes, statePartitions, replicationFactor, minInsyncReplicas, transactionTimeout, watchQueueBytes, maxBatchRecords,
        etcdMaxInboundBytes, snapshotPageSize, materializer, retryBackoffMax, leaderElection,
        electionName != null ? electionName : "/watchfanout/elections/" + topicPrefix + "/ingester", electionLeaseTtl,
        heartbeatInterval, dependencyTimeout);
  }

  private void require(boolean ok, String flag, Object value, String expected) {
    if (!ok) {
      throw new CommandLine.ParameterException(usageTarget(), flag + ": " + value + " (expected: " + expected + ")");
    }
  }

  /** The command line that parsed the flags: its error stream is where a usage error goes. */
  private CommandLine usageTarget() {
    return spec != null ? spec.commandLine() : new CommandLine(this);
  }

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    IngesterConfig config = config();
    DefaultExports.initialize();
    Ingester ingester = new Ingester(config, CollectorRegistry.defaultRegistry);
    try {
      ingester.startOperationsEndpoints();
    } catch (OpsServer.CannotListenException e) {
      // A taken port is the user's to fix, not a bug: one line naming the flag, no stack trace.
      ingester.close();
      spec.commandLine().getErr().println("ingester: --http-host/--http-port: " + e.getMessage()
          + " (expected: a free port; --http-port 0 picks one, -1 disables the endpoints)");
      spec.commandLine().getErr().flush();
      return 1;
    }
    Thread hook = new Thread(() -> {
      log.info("stopping (signal received)");
      ingester.close();
    }, "shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    ingester.start();
    while (!ingester.awaitStop(Duration.ofSeconds(1))) {
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
