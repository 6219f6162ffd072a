package io.watchfanout.bench;

import io.etcd.jetcd.Client;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The processes a scenario needs, all on loopback, started with the testkit: etcd, a KRaft
 * Kafka broker, the ingester jar and fan-out node jars as child processes. Closing it stops
 * every process it started (and the testkit's reaper kills any left at JVM exit).
 *
 * <p>Thread-safety: start and stop from the scenario's thread.
 */
final class Stack implements AutoCloseable {
  static final String TOPIC_PREFIX = "bench";
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final Path repo;
  private final Progress progress;
  private EtcdServer etcd;
  private KafkaBroker kafka;
  private JavaProcess ingester;
  private final List<AutoCloseable> others = new ArrayList<>();
  private Client client;

  Stack(Path repo, Progress progress) {
    this.repo = repo;
    this.progress = progress;
  }

  Stack startEtcd() {
    progress.log("starting etcd");
    etcd = EtcdServer.builder().build().start();
    return this;
  }

  Stack startKafka() {
    progress.log("starting Kafka (KRaft, one node)");
    kafka = KafkaBroker.builder().maxHeap("1g").build().start();
    return this;
  }

  Stack startIngester() {
    Path jar = jar("ingester/target/ingester.jar");
    progress.log("starting the ingester " + jar);
    int port = FreePorts.pick();
    ingester = JavaProcess.builderForJar(jar).name("ingester").maxHeap("512m")
        .args("--etcd-endpoints", etcd.clientUrl(), "--kafka-bootstrap", kafka.bootstrapServers(),
            "--topic-prefix", TOPIC_PREFIX, "--http-port", Integer.toString(port), "--http-host", "127.0.0.1")
        .start();
    awaitReady("ingester", "http://127.0.0.1:" + port + "/readyz", ingester, Duration.ofSeconds(90));
    return this;
  }

  /** A running fan-out node. */
  static final class Node implements AutoCloseable {
    final JavaProcess process;
    final int port;

    Node(JavaProcess process, int port) {
      this.process = process;
      this.port = port;
    }

    long pid() {
      return process.pid();
    }

    /** The node's metrics, name (with labels) → value. */
    Map<String, Double> metrics() throws IOException, InterruptedException {
      return scrape("http://127.0.0.1:" + port + "/metrics");
    }

    @Override
    public void close() {
      process.close();
    }
  }

  /** Starts a fan-out node with extra flags and JVM options and waits until it is ready. */
  Node startNode(List<String> flags, List<String> jvmArgs, String maxHeap) {
    return startNode(TOPIC_PREFIX, flags, jvmArgs, maxHeap);
  }

  /** As {@link #startNode(List, List, String)} on the topics of {@code topicPrefix}. */
  Node startNode(String topicPrefix, List<String> flags, List<String> jvmArgs, String maxHeap) {
    Path jar = jar("fanout-node/target/fanout-node.jar");
    int port = FreePorts.pick();
    List<String> args = new ArrayList<>(List.of("--kafka-bootstrap", kafka.bootstrapServers(),
        "--topic-prefix", topicPrefix, "--port", Integer.toString(port), "--node-id", "bench-" + port));
    if (!flags.contains("--max-feed-staleness")) {
      // Topics that bench's own feeder wrote carry no heartbeats: a node must not call them stale.
      args.addAll(List.of("--max-feed-staleness", "0"));
    }
    args.addAll(flags);
    JavaProcess.Builder b = JavaProcess.builderForJar(jar).name("fanout-" + port).maxHeap(maxHeap).args(args);
    jvmArgs.forEach(b::jvmArg);
    // BENCH_NODE_JAVA_OPTS: extra JVM options of every node, e.g. a JFR recording (docs/BENCHMARKS.md).
    String extra = System.getenv("BENCH_NODE_JAVA_OPTS");
    if (extra != null && !extra.isBlank()) {
      for (String opt : extra.trim().split("\\s+")) {
        b.jvmArg(opt.replace("{port}", Integer.toString(port)));
      }
    }
    progress.log("starting a fan-out node on port " + port + (flags.isEmpty() ? "" : " " + flags));
    JavaProcess p = b.start();
    Node node = new Node(p, port);
    others.add(node);
    awaitReady("fan-out node", "http://127.0.0.1:" + port + "/readyz", p, Duration.ofMinutes(15));
    return node;
  }

  /** Registers something to close with the stack (e.g. a grpc-proxy). */
  void closeLater(AutoCloseable c) {
    others.add(c);
  }

  EtcdServer etcd() {
    return etcd;
  }

  KafkaBroker kafka() {
    return kafka;
  }

  JavaProcess ingester() {
    return ingester;
  }

  /** A shared jetcd client of the stack's etcd. */
  synchronized Client etcdClient() {
    if (client == null) {
      client = Client.builder().endpoints(etcd.clientUrl()).maxInboundMessageSize(64 << 20).build();
    }
    return client;
  }

  private Path jar(String relative) {
    Path p = repo.resolve(relative);
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException(p + " is missing (expected: built by `mvn -B -o install -DskipTests "
          + "-pl schema,common,testkit,ingester,fanout-node`)");
    }
    return p;
  }

  private void awaitReady(String what, String url, JavaProcess p, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException(what + " exited early; log " + p.logFile() + ":\n" + p.logTail(30));
      }
      try {
        HttpResponse<Void> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
            HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
    throw new IllegalStateException(what + " not ready at " + url + " within " + timeout + "; log " + p.logFile()
        + ":\n" + p.logTail(30));
  }

  /** Prometheus text format → sample name (with labels) → value. */
  static Map<String, Double> scrape(String url) throws IOException, InterruptedException {
    String body = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    Map<String, Double> m = new HashMap<>();
    for (String line : body.split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int sp = line.lastIndexOf(' ');
      try {
        m.put(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1)));
      } catch (RuntimeException e) {
        // not a sample
      }
    }
    return m;
  }

  /** Sum of every sample whose name starts with {@code prefix} (all label sets). */
  static double sum(Map<String, Double> metrics, String prefix) {
    double s = 0;
    for (Map.Entry<String, Double> e : metrics.entrySet()) {
      String k = e.getKey();
      if (k.equals(prefix) || k.startsWith(prefix + "{")) {
        s += e.getValue();
      }
    }
    return s;
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
    }
    for (int i = others.size() - 1; i >= 0; i--) {
      try {
        others.get(i).close();
      } catch (Exception e) {
        progress.log("closing " + others.get(i) + ": " + e);
      }
    }
    if (ingester != null) {
      ingester.close();
    }
    if (kafka != null) {
      kafka.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }
}
