package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.e2e.Stack;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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

    private static HttpResponse<byte[]> send(HttpRequest request) throws IOException, InterruptedException {
        return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }
}
