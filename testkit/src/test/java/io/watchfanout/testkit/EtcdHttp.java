package io.watchfanout.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Minimal client of etcd 3.4's HTTP/JSON gateway ({@code /v3/kv/...}), for the testkit's own tests. */
final class EtcdHttp {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern VALUE = Pattern.compile("\"value\":\"([A-Za-z0-9+/=]*)\"");
    private static final Pattern REVISION = Pattern.compile("\"revision\":\"(\\d+)\"");

    private EtcdHttp() {}

    /** Puts {@code key=value}; returns the new store revision. */
    static long put(EtcdServer etcd, String key, byte[] value) throws IOException, InterruptedException {
        String body =
                "{\"key\":\"" + b64(key.getBytes(StandardCharsets.UTF_8)) + "\",\"value\":\"" + b64(value) + "\"}";
        String answer = post(etcd, "/v3/kv/put", body);
        Matcher m = REVISION.matcher(answer);
        if (!m.find()) {
            throw new AssertionError("no revision in put answer: " + answer);
        }
        return Long.parseLong(m.group(1));
    }

    /** Reads one key's value. */
    static Optional<byte[]> get(EtcdServer etcd, String key) throws IOException, InterruptedException {
        String answer = post(etcd, "/v3/kv/range", "{\"key\":\"" + b64(key.getBytes(StandardCharsets.UTF_8)) + "\"}");
        Matcher m = VALUE.matcher(answer);
        return m.find() ? Optional.of(Base64.getDecoder().decode(m.group(1))) : Optional.empty();
    }

    static String post(EtcdServer etcd, String path, String body) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(etcd.clientUrl() + path))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("POST " + path + ": HTTP " + response.statusCode() + " " + response.body());
        }
        return response.body();
    }

    static String b64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }
}
