package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.watchfanout.common.tls.PeerCertificates;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.testkit.Curl;
import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.TlsClientContext;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP port over TLS with certificates made by the test: curl and Java's HttpClient read
 * {@code /readyz} and a watch stream; the request-target guard still answers with a JSON
 * {@code Status}; with client CAs (mutual TLS) a client without a certificate, or with one of
 * another CA, is refused and one of the CA is served; a certificate rotated on disk is what new
 * connections get, while an open watch stream goes on receiving its events.
 */
class HttpTlsTest {
    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    @TempDir
    Path dir;

    private Pki pki;
    private Pki.Issued server;

    @BeforeEach
    void certificates() {
        pki = Pki.create(dir, "ca");
        server = pki.server("node", "node-a");
    }

    private TestNode node(boolean mutual) {
        return nodes.startWithTls(
                ServerTls.load(new TlsFiles(server.cert(), server.key(), mutual ? pki.caCert() : null)));
    }

    private static HttpClient client(SSLContext tls) {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .sslContext(tls)
                .connectTimeout(Duration.ofSeconds(30))
                .build();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void curlAndHttpClientReadReadyzAndAWatchStream() throws Exception {
        TestNode node = node(false);
        String readyz = node.uri("/readyz").toString();
        assertThat(readyz).startsWith("https://");
        assertThat(Curl.run("--cacert", pki.caCert().toString(), readyz)).isEqualTo(Curl.ok("ok\n"));
        assertThat(Curl.run(readyz).exit())
                .as("curl without the CA does not trust the node")
                .isNotZero();
        Curl bad = Curl.run(
                "--cacert",
                pki.caCert().toString(),
                "-w",
                "\n%{http_code}",
                readyz.replace("/readyz", "/v1/watch?key=%zz"));
        assertThat(bad.out()).contains("\"reason\":\"BadRequest\"").endsWith("\n400");

        HttpClient javaClient = client(TlsClientContext.of(pki.caCert(), null));
        HttpResponse<String> ok = javaClient.send(
                HttpRequest.newBuilder(node.uri("/readyz")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("ok\n");

        node.feed(node.etcd.put("/a/1", "x"));
        String watch =
                node.uri("/v1/watch?key=/a/&prefix=true&resourceVersion=100").toString();
        Process stream = new ProcessBuilder(
                        "curl", "-sS", "-N", "--cacert", pki.caCert().toString(), watch)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(stream.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(lines.readLine()).contains("\"type\":\"ADDED\"").contains(b64("/a/1"));
            node.feed(node.etcd.put("/a/1", "y"));
            assertThat(lines.readLine()).contains("\"type\":\"MODIFIED\"").contains(b64("y"));
        } finally {
            stream.destroyForcibly().waitFor();
        }
        HttpResponse<InputStream> javaStream = javaClient.send(
                HttpRequest.newBuilder(URI.create(watch)).build(), HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(javaStream.body(), StandardCharsets.UTF_8))) {
            assertThat(lines.readLine()).contains("\"type\":\"ADDED\"");
            assertThat(lines.readLine()).contains("\"type\":\"MODIFIED\"");
        }
    }

    @Test
    void mutualTlsServesOnlyClientsWithACertificateOfTheCa() throws Exception {
        TestNode node = node(true);
        String readyz = node.uri("/readyz").toString();
        Pki.Issued alice = pki.client("alice", "alice");
        Pki.Issued mallory = Pki.create(dir.resolve("other"), "other-ca").client("mallory", "mallory");

        assertThat(Curl.tls(pki.caCert(), null, readyz).exit())
                .as("no client certificate")
                .isNotZero();
        assertThat(Curl.tls(pki.caCert(), mallory, readyz).exit())
                .as("a client certificate of another CA")
                .isNotZero();
        assertThat(Curl.tls(pki.caCert(), alice, readyz)).isEqualTo(Curl.ok("ok\n"));

        HttpRequest get = HttpRequest.newBuilder(node.uri("/readyz")).build();
        assertThatThrownBy(() ->
                        client(TlsClientContext.of(pki.caCert(), null)).send(get, HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);
        assertThatThrownBy(() -> client(TlsClientContext.of(pki.caCert(), mallory))
                        .send(get, HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);
        assertThat(client(TlsClientContext.of(pki.caCert(), alice))
                        .send(get, HttpResponse.BodyHandlers.ofString())
                        .body())
                .isEqualTo("ok\n");
    }

    @Test
    void aRotatedCertificateIsWhatNewConnectionsGetWhileAnOpenStreamGoesOn() throws Exception {
        TestNode node = node(false);
        SSLContext trustCa = TlsClientContext.of(pki.caCert(), null);
        BigInteger before =
                TlsClientContext.served(trustCa, "127.0.0.1", node.api.port()).getSerialNumber();

        HttpResponse<InputStream> stream = client(trustCa)
                .send(
                        HttpRequest.newBuilder(node.uri("/v1/watch?key=/r/&prefix=true&resourceVersion=100"))
                                .build(),
                        HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            node.feed(node.etcd.put("/r/1", "before"));
            assertThat(lines.readLine()).contains(b64("before"));

            pki.server("node", "node-b"); // the same files, replaced
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(TlsClientContext.served(trustCa, "127.0.0.1", node.api.port()))
                            .satisfies(c -> {
                                assertThat(c.getSerialNumber()).isNotEqualTo(before);
                                assertThat(PeerCertificates.commonName(c)).isEqualTo("node-b");
                            }));

            node.feed(node.etcd.put("/r/1", "after"));
            assertThat(lines.readLine())
                    .as("the stream opened before the rotation")
                    .contains(b64("after"));
        }
        assertThat(Curl.run(
                        "--cacert", pki.caCert().toString(), node.uri("/readyz").toString()))
                .isEqualTo(Curl.ok("ok\n"));
    }
}
