package io.watchfanout.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.Pki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The node's TLS flags: parsed into the configuration, also from the environment; a key
 * without a certificate, or client CAs without both, is a usage error (exit 2); a certificate
 * that does not parse is a one-line startup error naming the flag (exit 1).
 */
class FanoutNodeTlsFlagsTest {
    private static final String[] REQUIRED = {"--kafka-bootstrap", "127.0.0.1:1", "--topic-prefix", "t", "--port", "0"};

    private static String[] withRequired(String... args) {
        String[] all = java.util.Arrays.copyOf(REQUIRED, REQUIRED.length + args.length);
        System.arraycopy(args, 0, all, REQUIRED.length, args.length);
        return all;
    }

    private static CommandLine cli(FanoutNodeMain main, Map<String, String> env, StringWriter err) {
        CommandLine cl = new CommandLine(main).setDefaultValueProvider(new EnvironmentDefaults(env));
        cl.setErr(new PrintWriter(err));
        cl.setOut(new PrintWriter(err));
        return cl;
    }

    @Test
    void theFilesAreInTheConfiguration() {
        FanoutNodeMain main = new FanoutNodeMain();
        cli(main, Map.of("WATCHFANOUT_CLIENT_CA_FILE", "ca.pem"), new StringWriter())
                .parseArgs(withRequired("--tls-cert-file", "c.pem", "--tls-key-file", "k.pem"));
        NodeConfig config = main.toConfig();
        assertThat(config.tls().certFile()).isEqualTo(Path.of("c.pem"));
        assertThat(config.tls().keyFile()).isEqualTo(Path.of("k.pem"));
        assertThat(config.tls().clientCaFile()).isEqualTo(Path.of("ca.pem"));
        FanoutNodeMain plain = new FanoutNodeMain();
        cli(plain, Map.of(), new StringWriter()).parseArgs(withRequired());
        assertThat(plain.toConfig().tls()).isNull();
    }

    @Test
    void incompleteTlsFlagsAreUsageErrors() {
        StringWriter err = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), err).execute(withRequired("--tls-key-file", "k.pem")))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--tls-key-file without --tls-cert-file");
        StringWriter caOnly = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), caOnly).execute(withRequired("--client-ca-file", "ca.pem")))
                .isEqualTo(2);
        assertThat(caOnly.toString()).contains("--client-ca-file needs --tls-cert-file and --tls-key-file");
    }

    @Test
    void anUnparsableCertificateIsOneLineNamingTheFlagWithoutAStackTrace(@TempDir Path dir) throws Exception {
        Pki.Issued server = Pki.create(dir, "ca").server("node", "node");
        Path garbage = dir.resolve("garbage.pem");
        Files.writeString(garbage, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
        try (JavaProcess node = JavaProcess.builder(FanoutNodeMain.class.getName())
                .name("node-tls-garbage")
                .maxHeap("128m")
                .args(withRequired(
                        "--tls-cert-file",
                        garbage.toString(),
                        "--tls-key-file",
                        server.key().toString()))
                .start()) {
            assertThat(node.waitForExit(Duration.ofSeconds(120))).hasValue(1);
            assertThat(Files.readString(node.logFile()))
                    .contains("fanout-node: --tls-cert-file " + garbage + ": unreadable certificate PEM")
                    .doesNotContain("\tat ");
        }
    }
}
