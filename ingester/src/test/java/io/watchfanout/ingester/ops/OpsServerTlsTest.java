package io.watchfanout.ingester.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.testkit.Curl;
import io.watchfanout.testkit.Pki;
import java.nio.file.Path;
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
    private static String curl(String... args) {
        Curl c = Curl.run(args);
        return c.exit() == 0 ? c.out() : null;
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
        try (OpsServer ops = start(ServerTls.load(new TlsFiles(server.cert(), server.key(), pki.caCert())))) {
            String readyz = "https://127.0.0.1:" + ops.port() + "/readyz";
            assertThat(Curl.tls(pki.caCert(), null, readyz).exit())
                    .as("no client certificate")
                    .isNotZero();
            assertThat(Curl.tls(pki.caCert(), mallory, readyz).exit())
                    .as("a client certificate of another CA")
                    .isNotZero();
            assertThat(Curl.tls(pki.caCert(), prometheus, readyz)).isEqualTo(Curl.ok("ok\n"));
        }
    }
}
