package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.Pki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The ingester's TLS flags: parsed into the configuration; a certificate without a key is a
 * usage error (exit 2); a missing file is a one-line startup error naming the flag (exit 1).
 */
class IngesterTlsFlagsTest {
    private static final String[] REQUIRED = {
        "--etcd-endpoints",
        "127.0.0.1:1",
        "--kafka-bootstrap",
        "127.0.0.1:1",
        "--topic-prefix",
        "t",
        "--http-host",
        "127.0.0.1",
        "--http-port",
        "0"
    };

    private static String[] withRequired(String... args) {
        String[] all = java.util.Arrays.copyOf(REQUIRED, REQUIRED.length + args.length);
        System.arraycopy(args, 0, all, REQUIRED.length, args.length);
        return all;
    }

    @Test
    void theFilesAreInTheConfiguration() {
        CommandLine cl = IngesterMain.commandLine();
        cl.parseArgs(withRequired("--tls-cert-file", "c.pem", "--tls-key-file", "k.pem", "--client-ca-file", "ca.pem"));
        IngesterConfig config = ((IngesterMain) cl.getCommand()).config();
        assertThat(config.tls().certFile()).isEqualTo(Path.of("c.pem"));
        assertThat(config.tls().keyFile()).isEqualTo(Path.of("k.pem"));
        assertThat(config.tls().clientCaFile()).isEqualTo(Path.of("ca.pem"));
        CommandLine plain = IngesterMain.commandLine();
        plain.parseArgs(withRequired());
        assertThat(((IngesterMain) plain.getCommand()).config().tls()).isNull();
    }

    @Test
    void aCertificateWithoutAKeyIsAUsageError() {
        StringWriter err = new StringWriter();
        CommandLine cl = IngesterMain.commandLine();
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute(withRequired("--tls-cert-file", "c.pem"))).isEqualTo(2);
        assertThat(err.toString())
                .contains("--tls-cert-file without --tls-key-file (expected: both --tls-cert-file and --tls-key-file, "
                        + "or neither)");
    }

    @Test
    void aMissingFileIsOneLineNamingTheFlagWithoutAStackTrace(@TempDir Path dir) throws Exception {
        Pki.Issued server = Pki.create(dir, "ca").server("ingester", "ingester");
        Path missing = dir.resolve("missing-key.pem");
        try (JavaProcess ingester = JavaProcess.builder(IngesterMain.class.getName())
                .name("ingester-tls-missing")
                .maxHeap("128m")
                .args(withRequired("--tls-cert-file", server.cert().toString(), "--tls-key-file", missing.toString()))
                .start()) {
            assertThat(ingester.waitForExit(Duration.ofSeconds(120))).hasValue(1);
            assertThat(Files.readString(ingester.logFile()))
                    .contains("ingester: --tls-key-file " + missing + ": no such file")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
        }
    }
}
