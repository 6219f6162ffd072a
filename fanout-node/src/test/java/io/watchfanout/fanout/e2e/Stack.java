package io.watchfanout.fanout.e2e;

import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.StackLauncher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

/**
 * The real ingester (its jar) and fan-out nodes (this module's main class) as child processes of
 * a test, started through the testkit's {@link StackLauncher} on the test's shared etcd and Kafka;
 * plus the HTTP helpers the end-to-end tests read nodes with.
 */
public final class Stack {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** How far back an ingester of a test's stack publishes the history of etcd at most. */
    static final int INITIAL_HISTORY_REVISIONS = 1000;

    private Stack() {}

    /**
     * Starts the ingester of a topic prefix and waits until it watches etcd. Its history starts at
     * most {@value #INITIAL_HISTORY_REVISIONS} revisions back: the test JVM's shared etcd holds
     * every earlier test's writes, which no test reads back through another test's topics. A test
     * whose nodes' history must begin at the ingester's start passes
     * {@code --initial-history-revisions 0}.
     *
     * @param extra more flags of the ingester
     */
    public static JavaProcess ingester(String etcdUrl, String bootstrap, String topicPrefix, String... extra) {
        // The ingester jar of the ingester module (package runs before this module's tests).
        Path jar = StackLauncher.jar(Path.of(".."), "ingester");
        JavaProcess p = StackLauncher.on(etcdUrl, bootstrap, topicPrefix)
                .ingester(JavaProcess.builderForJar(jar).name("ingester").maxHeap("256m"), 0)
                .args(
                        Arrays.asList(extra).contains("--initial-history-revisions")
                                ? new String[0]
                                : new String[] {
                                    "--initial-history-revisions", Integer.toString(INITIAL_HISTORY_REVISIONS)
                                })
                .args(extra)
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
    public static Node node(String name, String bootstrap, String topicPrefix, String... extra) {
        int port = FreePorts.pick();
        JavaProcess p = StackLauncher.on(null, bootstrap, topicPrefix)
                .node(
                        JavaProcess.builder("io.watchfanout.fanout.FanoutNodeMain")
                                .name(name)
                                .maxHeap("384m"),
                        port,
                        name)
                .args("--bookmark-interval", "1s")
                .args(extra)
                .start();
        Node node = new Node(p, port);
        StackLauncher.awaitReady(p, name, node.url() + "/readyz", Duration.ofSeconds(90), () -> {});
        return node;
    }

    /**
     * A fan-out node with etcd's v3 API on {@code etcdApiPort}, forwarding to {@code etcdUrl}, ready.
     *
     * @param extra more flags of the node
     */
    public static Node etcdApiNode(
            String name, String bootstrap, String topicPrefix, int etcdApiPort, String etcdUrl, String... extra) {
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
            return HTTP.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .header("Accept", "application/json")
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return new FailedResponse(url);
        }
    }

    /** Prometheus samples of a node's /metrics, by name with labels. */
    public static Map<String, Double> metrics(Node node) throws InterruptedException {
        try {
            return StackLauncher.metrics(node.url() + "/metrics");
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + node.url() + "/metrics", e);
        }
    }

    private record FailedResponse(String url) implements HttpResponse<String> {
        @Override
        public int statusCode() {
            return 599;
        }

        @Override
        public HttpRequest request() {
            return HttpRequest.newBuilder(URI.create(url)).build();
        }

        @Override
        public java.util.Optional<HttpResponse<String>> previousResponse() {
            return java.util.Optional.empty();
        }

        @Override
        public java.net.http.HttpHeaders headers() {
            return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true);
        }

        @Override
        public String body() {
            return "";
        }

        @Override
        public java.util.Optional<javax.net.ssl.SSLSession> sslSession() {
            return java.util.Optional.empty();
        }

        @Override
        public URI uri() {
            return URI.create(url);
        }

        @Override
        public HttpClient.Version version() {
            return HttpClient.Version.HTTP_1_1;
        }
    }
}
