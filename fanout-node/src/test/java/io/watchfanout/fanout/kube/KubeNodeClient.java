package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.e2e.Stack;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Raw HTTP reads of a node's Kubernetes API, with the Accept header a test chooses. */
final class KubeNodeClient {
    static final String JSON = "application/json";
    static final String PROTOBUF = "application/vnd.kubernetes.protobuf";
    static final String TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Stack.Node node;

    KubeNodeClient(Stack.Node node) {
        this.node = node;
    }

    HttpResponse<byte[]> get(String pathAndQuery, String accept) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(node.url() + pathAndQuery))
                .header("Accept", accept)
                .GET()
                .build());
    }

    HttpResponse<byte[]> send(String method, String pathAndQuery) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(node.url() + pathAndQuery))
                .header("Content-Type", JSON)
                .method(method, HttpRequest.BodyPublishers.ofString("{}"))
                .build());
    }

    /**
     * One GET whose target is sent byte for byte ({@code java.net.http} refuses a malformed one,
     * such as {@code ?labelSelector=%%%}), on a connection that closes after it.
     *
     * @return the status code and the body (not chunked: the node answers refusals whole)
     */
    RawResponse raw(String target) throws IOException {
        URI base = URI.create(node.url());
        try (Socket s = new Socket(base.getHost(), base.getPort())) {
            s.getOutputStream()
                    .write(("GET " + target + " HTTP/1.1\r\nHost: x\r\nAccept: " + JSON
                                    + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            String response = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int code = Integer.parseInt(response.substring(9, 12));
            int body = response.indexOf("\r\n\r\n");
            return new RawResponse(code, body < 0 ? "" : response.substring(body + 4));
        }
    }

    /** A status code and a body. */
    record RawResponse(int code, String body) {}

    private static HttpResponse<byte[]> send(HttpRequest request) throws IOException, InterruptedException {
        return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }
}
