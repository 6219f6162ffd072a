package io.watchfanout.fanout.e2e;

import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** Starts the real ingester (its jar) and fan-out nodes as child processes for a test. */
public final class Stack {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private Stack() {}

  /** The ingester jar built by the ingester module (package runs before this module's tests). */
  public static Path ingesterJar() {
    Path jar = Path.of("..", "ingester", "target", "ingester.jar").toAbsolutePath().normalize();
    if (!Files.exists(jar)) {
      throw new IllegalStateException(jar + " is missing: run the tests with 'mvn verify' from the project root");
    }
    return jar;
  }

  /** Starts the ingester of a topic prefix and waits until it watches etcd. */
  public static JavaProcess ingester(String etcdUrl, String bootstrap, String topicPrefix) {
    JavaProcess p = JavaProcess.builderForJar(ingesterJar()).name("ingester").maxHeap("256m")
        .args("--etcd-endpoints", etcdUrl, "--kafka-bootstrap", bootstrap, "--topic-prefix", topicPrefix,
            "--http-port", "0", "--http-host", "127.0.0.1")
        .start();
    p.awaitLog("watching etcd from revision", Duration.ofSeconds(60));
    return p;
  }

  /** A started fan-out node process. */
  public record Node(JavaProcess process, int port) implements AutoCloseable {
    public String url() {
      return "http://127.0.0.1:" + port;
    }

    @Override
    public void close() {
      process.close();
    }
  }

  /** Starts a fan-out node with 1 s bookmarks and waits until /readyz answers 200. */
  public static Node node(String name, String bootstrap, String topicPrefix, String... extra) throws Exception {
    int port = FreePorts.pick();
    JavaProcess p = JavaProcess.builder("io.watchfanout.fanout.FanoutNodeMain").name(name).maxHeap("384m")
        .args("--kafka-bootstrap", bootstrap, "--topic-prefix", topicPrefix, "--port", Integer.toString(port),
            "--node-id", name, "--bookmark-interval", "1s")
        .args(extra)
        .start();
    Node node = new Node(p, port);
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (get(node.url() + "/readyz").statusCode() != 200) {
      if (System.nanoTime() > deadline || !p.isAlive()) {
        throw new IllegalStateException(name + " did not become ready: " + p.logTail(40));
      }
      Thread.sleep(200);
    }
    return node;
  }

  /**
   * A fan-out node with etcd's v3 API on {@code etcdApiPort}, forwarding to {@code etcdUrl}, ready.
   *
   * @param extra more flags of the node
   */
  public static Node etcdApiNode(String name, String bootstrap, String topicPrefix, int etcdApiPort, String etcdUrl,
      String... extra) throws Exception {
    String[] flags = new String[extra.length + 4];
    flags[0] = "--etcd-api-port";
    flags[1] = Integer.toString(etcdApiPort);
    flags[2] = "--etcd-endpoints";
    flags[3] = etcdUrl;
    System.arraycopy(extra, 0, flags, 4, extra.length);
    return node(name, bootstrap, topicPrefix, flags);
  }

  /** GET, answering status 599 when the connection fails. */
  public static HttpResponse<String> get(String url) throws InterruptedException {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Accept", "application/json").build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      return new FailedResponse(url);
    }
  }

  /** Prometheus samples of a node's /metrics, by name with labels. */
  public static Map<String, Double> metrics(Node node) throws InterruptedException {
    Map<String, Double> out = new HashMap<>();
    for (String line : get(node.url() + "/metrics").body().split("\n")) {
      if (!line.startsWith("#") && !line.isBlank()) {
        int space = line.lastIndexOf(' ');
        out.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
      }
    }
    return out;
  }

  private record FailedResponse(String url) implements HttpResponse<String> {
    @Override public int statusCode() { return 599; }
    @Override public HttpRequest request() { return HttpRequest.newBuilder(URI.create(url)).build(); }
    @Override public java.util.Optional<HttpResponse<String>> previousResponse() { return java.util.Optional.empty(); }
    @Override public java.net.http.HttpHeaders headers() { return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true); }
    @Override public String body() { return ""; }
    @Override public java.util.Optional<javax.net.ssl.SSLSession> sslSession() { return java.util.Optional.empty(); }
    @Override public URI uri() { return URI.create(url); }
    @Override public HttpClient.Version version() { return HttpClient.Version.HTTP_1_1; }
  }
}
