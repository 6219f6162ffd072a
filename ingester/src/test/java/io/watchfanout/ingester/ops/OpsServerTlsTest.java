package io.watchfanout.ingester.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.testkit.Pki;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operations port over TLS, read with the real curl: {@code /readyz} with the CA's
 * certificate, and with client CAs only by a client with a certificate they signed.
 */
class OpsServerTlsTest {
    @TempDir
    Path dir;

    /** curl's output, or null if it failed. */
    private static String curl(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("curl", "-sS", "--max-time", "60"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
        return p.exitValue() == 0 ? out : null;
    }

    private static OpsServer start(ServerTls tls) {
        return new OpsServer("127.0.0.1", 0, new CollectorRegistry(), () -> "", () -> "", tls);
    }

    @Test
    void readyzOverTls() throws Exception {
        Pki pki = Pki.create(dir, "ca");
        Pki.Issued server = pki.server("ingester", "ingester");
        try (OpsServer ops = start(ServerTls.load(new TlsFiles(server.cert(), server.key(), null)))) {
            String readyz = "https://127.0.0.1:" + ops.port() + "/readyz";
            assertThat(curl("--cacert", pki.caCert().toString(), readyz)).isEqualTo("ok\n");
            assertThat(curl(readyz))
                    .as("without the CA curl does not trust the port")
                    .isNull();
            assertThat(curl("http://127.0.0.1:" + ops.port() + "/readyz"))
                    .as("plaintext on the TLS port")
                    .isNotEqualTo("ok\n");
        }
    }

    @Test
    void readyzOverMutualTls() throws Exception {
        Pki pki = Pki.create(dir, "ca");
        Pki.Issued server = pki.server("ingester", "ingester");
        Pki.Issued prometheus = pki.client("prometheus", "prometheus");
        Pki.Issued mallory = Pki.create(dir.resolve("other"), "other-ca").client("mallory", "mallory");
        String ca = pki.caCert().toString();
        try (OpsServer ops = start(ServerTls.load(new TlsFiles(server.cert(), server.key(), pki.caCert())))) {
            String readyz = "https://127.0.0.1:" + ops.port() + "/readyz";
            assertThat(curl("--cacert", ca, readyz)).as("no client certificate").isNull();
            assertThat(curl(
                            "--cacert",
                            ca,
                            "--cert",
                            mallory.cert().toString(),
                            "--key",
                            mallory.key().toString(),
                            readyz))
                    .as("a client certificate of another CA")
                    .isNull();
            assertThat(curl(
                            "--cacert",
                            ca,
                            "--cert",
                            prometheus.cert().toString(),
                            "--key",
                            prometheus.key().toString(),
                            readyz))
                    .isEqualTo("ok\n");
        }
    }
}
