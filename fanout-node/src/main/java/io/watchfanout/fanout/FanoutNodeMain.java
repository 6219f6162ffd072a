package io.watchfanout.fanout;

import io.watchfanout.common.ByteSizeConverter;
import io.watchfanout.common.DurationConverter;
import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.EtcdEndpointConverter;
import io.watchfanout.common.KafkaBootstrapConverter;
import io.watchfanout.fanout.http.HttpApi;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The fan-out node's command line (README.md, "Command line"):
 * {@code java -jar fanout-node.jar --kafka-bootstrap HOSTS --topic-prefix NAME --port PORT}.
 * Every flag also reads from {@code WATCHFANOUT_<FLAG_NAME>} (e.g. {@code --kafka-bootstrap}
 * from {@code WATCHFANOUT_KAFKA_BOOTSTRAP}, by the project's {@link EnvironmentDefaults}); a
 * flag on the command line wins over the environment, which wins over the default in the
 * flag's annotation (the single source of {@code --help}'s defaults). Bad flags exit with
 * status 2.
 */
@Command(name = "fanout-node", mixinStandardHelpOptions = true, sortOptions = false,
    version = "watch-fanout fan-out node 0.1.0",
    defaultValueProvider = EnvironmentDefaults.class,
    description = {
        "Rebuilds a watch cache of an etcd range from Kafka (<prefix>.state, then <prefix>.events) and serves",
        "HTTP watch streams: GET /v1/watch, GET /v1/kv, /readyz, /livez, /metrics; with --etcd-api-port, etcd's v3 API.",
        "Every flag can also be set by the environment variable WATCHFANOUT_<FLAG_NAME>,",
        "e.g. WATCHFANOUT_KAFKA_BOOTSTRAP. Durations: 500ms, 5s, 10m, 2h, 7d."},
    footer = {"", "Exit status: 143 after SIGTERM (a graceful drain), 1 on a startup failure, 2 on bad flags."})
public final class FanoutNodeMain implements Callable<Integer> {
  @Option(names = "--kafka-bootstrap", paramLabel = "HOSTS", converter = KafkaBootstrapConverter.class,
      description = "Kafka bootstrap servers, host:port[,host:port] (required).")
  String kafkaBootstrap;

  @Option(names = "--topic-prefix", paramLabel = "NAME",
      description = "Topic prefix: reads <NAME>.state and <NAME>.events (required).")
  String topicPrefix;

  @Option(names = "--port", paramLabel = "PORT", description = "HTTP port, 0 for a free one (required).")
  Integer port;

  @Option(names = "--bind-address", defaultValue = "127.0.0.1", paramLabel = "ADDRESS",
      description = "HTTP listen address (default: ${DEFAULT-VALUE}).")
  String bindAddress;

  @Option(names = "--node-id", paramLabel = "ID",
      description = "Id of this node in log lines and Kafka client ids (default: <hostname>-<port>).")
  String nodeId;

  @Option(names = "--bookmark-interval", defaultValue = "5s", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "Period of BOOKMARK frames on watch streams with allowWatchBookmarks=true (default: ${DEFAULT-VALUE}).")
  Duration bookmarkInterval;

  @Option(names = "--history-max-events", defaultValue = "100000", paramLabel = "N",
      description = "Events kept in the history window for resumes, in events (default: ${DEFAULT-VALUE}).")
  Integer historyMaxEvents;

  @Option(names = "--history-max-age", defaultValue = "10m", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "Age after which events leave the history window (default: ${DEFAULT-VALUE}).")
  Duration historyMaxAge;

  @Option(names = "--deep-read-max-readers", defaultValue = "8", paramLabel = "N",
      description = "Reads of the events topic for watches from before the history window that run at once; a "
          + "watch needing one more gets 429 TooManyRequests; 0 turns them off (such watches get 410 Expired) "
          + "(default: ${DEFAULT-VALUE}).")
  Integer deepReadMaxReaders;

  @Option(names = "--deep-read-max-bytes", defaultValue = "64MiB", paramLabel = "SIZE",
      converter = ByteSizeConverter.class,
      description = "Bytes of events one read of the events topic holds at most for its watchers (frames built "
          + "for them come on top) (default: ${DEFAULT-VALUE}).")
  Integer deepReadMaxBytes;

  @Option(names = "--resource-version-wait", defaultValue = "3s", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "How long a request for a resourceVersion ahead of the node waits before 504 Timeout "
          + "(default: ${DEFAULT-VALUE}).")
  Duration resourceVersionWait;

  @Option(names = "--watcher-queue-frames", defaultValue = "256", paramLabel = "N",
      description = "Frames a live watcher may have waiting before it is parked and catches up from history, "
          + "in frames (default: ${DEFAULT-VALUE}).")
  Integer watcherQueueFrames;

  @Option(names = "--shutdown-drain", defaultValue = "5s", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "On SIGTERM, how long open streams get to take their final frames (default: ${DEFAULT-VALUE}).")
  Duration shutdownDrain;

  @Option(names = "--stalled-close-after", defaultValue = "30s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Once a watch stream has ended (an ERROR frame such as 410 Expired, timeoutSeconds, shutdown), "
          + "how long its client gets to take the last frames before the connection is closed; a client "
          + "that stopped reading does not hold a connection forever (default: ${DEFAULT-VALUE}).")
  Duration stalledCloseAfter;

  @Option(names = "--max-feed-staleness", defaultValue = "10s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "/readyz fails when the newest record from the ingester (events, progress, or the heartbeat it "
          + "publishes every second while etcd is idle) is older than this: the ingester, Kafka or etcd stopped "
          + "feeding the node. The node goes on serving what it has. 0 turns the check off "
          + "(default: ${DEFAULT-VALUE}).")
  Duration maxFeedStaleness;
  @Option(names = "--write-timeout", defaultValue = "30s", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "How long a watch stream with frames waiting may go without its client's socket taking a "
          + "byte, or with bytes in flight that the kernel retries without an acknowledgement, before the "
          + "connection is closed and its watcher removed: a client gone without a FIN, or not reading at all; "
          + "a slow reader keeps its stream (default: ${DEFAULT-VALUE}).")
  Duration writeTimeout;

  @Option(names = "--tcp-keepalive-idle", defaultValue = "15s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "TCP keepalive of client connections: time without a packet from the client before the "
          + "first probe, whole seconds (default: ${DEFAULT-VALUE}).")
  Duration tcpKeepaliveIdle;

  @Option(names = "--tcp-keepalive-interval", defaultValue = "5s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Time between TCP keepalive probes, whole seconds (default: ${DEFAULT-VALUE}).")
  Duration tcpKeepaliveInterval;

  @Option(names = "--tcp-keepalive-count", defaultValue = "3", paramLabel = "N",
      description = "Unanswered TCP keepalive probes after which a client connection is broken and its watch "
          + "streams end; an idle connection to a vanished client goes after idle + count x interval "
          + "(default: ${DEFAULT-VALUE}).")
  Integer tcpKeepaliveCount;

  @Option(names = "--etcd-api-port", defaultValue = "-1", paramLabel = "PORT",
      description = "Port of etcd's v3 gRPC API on --bind-address: Watch and KV.Range are served from the cache, "
          + "every other call is forwarded to --etcd-endpoints; 0 for a free one, -1 for none (default: ${DEFAULT-VALUE}).")
  Integer etcdApiPort;

  @Option(names = "--etcd-endpoints", split = ",", paramLabel = "URLS", converter = EtcdEndpointConverter.class,
      description = "etcd client URLs, comma-separated (host:port means http://host:port): where the etcd API "
          + "forwards what the cache does not serve and learns etcd's cluster id and current revision "
          + "(default: none; those calls then answer UNAVAILABLE).")
  List<String> etcdEndpoints;

  @Option(names = "--progress-notify-interval", defaultValue = "10m", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "etcd API: how long a watch with progress_notify goes without a response before it gets an "
          + "empty one carrying the revision, as etcd's --experimental-watch-progress-notify-interval "
          + "(default: ${DEFAULT-VALUE}).")
  Duration progressNotifyInterval;

  @Option(names = "--cors-allowed-origins", split = ",", paramLabel = "ORIGINS",
      description = "Origins whose pages may read /v1/* and etcd's JSON gateway /v3/* across origins (CORS, "
          + "README.md \"Browsers\"), comma-separated, e.g. https://app.example.com,http://127.0.0.1:8080; * for "
          + "any (default: none; preflights get 403).")
  List<String> corsAllowedOrigins;

  @Option(names = "--bench-encode-per-watcher", hidden = true,
      description = "Benchmark only (bin/bench memo, docs/BENCHMARKS.md): live dispatch encodes a frame per watcher "
          + "instead of once per event and encoding, to measure what encode-once saves. Never in production.")
  boolean benchEncodePerWatcher;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  /** Builds the node configuration from the parsed flags. */
  NodeConfig toConfig() {
    require(kafkaBootstrap, "--kafka-bootstrap");
    require(topicPrefix, "--topic-prefix");
    require(port, "--port");
    String id = nodeId;
    if (id == null || id.isBlank()) {
      String host;
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (java.io.IOException e) {
        host = "node";
      }
      id = host + "-" + port;
    }
    try {
      return new NodeConfig(kafkaBootstrap, topicPrefix, bindAddress, port, id, bookmarkInterval, historyMaxEvents,
          historyMaxAge, resourceVersionWait, watcherQueueFrames, shutdownDrain, stalledCloseAfter, writeTimeout,
          tcpKeepaliveIdle, tcpKeepaliveInterval, tcpKeepaliveCount, maxFeedStaleness, etcdApiPort,
          etcdEndpoints == null ? List.of() : List.copyOf(etcdEndpoints), progressNotifyInterval,
          corsAllowedOrigins == null ? List.of() : List.copyOf(corsAllowedOrigins), deepReadMaxReaders,
          deepReadMaxBytes, benchEncodePerWatcher);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private void require(Object value, String flag) {
    if (value == null) {
      throw new CommandLine.ParameterException(spec.commandLine(), "Missing required option " + flag
          + " (or environment variable " + EnvironmentDefaults.variableFor(flag) + ")");
    }
  }

  @Override
  public Integer call() throws Exception {
    NodeConfig config = toConfig();
    FanoutNode node;
    try {
      node = FanoutNode.start(config);
    } catch (HttpApi.CannotListenException e) {
      // A taken port is the user's to fix, not a bug: one line naming the flags, no stack trace.
      spec.commandLine().getErr().println("fanout-node: --bind-address/--port: " + e.getMessage()
          + " (expected: a free port; --port 0 picks one)");
      spec.commandLine().getErr().flush();
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        node.close();
      } finally {
        stopped.countDown();
      }
    }, "watchfanout-shutdown"));
    stopped.await();
    return 0;
  }

  /** Entry point of {@code java -jar fanout-node.jar}. */
  public static void main(String[] args) {
    // grpc-java logs through java.util.logging: into SLF4J, with the node's own lines and levels.
    org.slf4j.bridge.SLF4JBridgeHandler.removeHandlersForRootLogger();
    org.slf4j.bridge.SLF4JBridgeHandler.install();
    System.exit(new CommandLine(new FanoutNodeMain()).execute(args));
  }
}
