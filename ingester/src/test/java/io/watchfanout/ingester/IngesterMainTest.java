package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.Pki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The ingester's command line: flags, defaults, environment and errors. */
class IngesterMainTest {

    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = IngesterMain.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = args.length > 0 && args[0].equals("--help") ? cl.execute(args) : parseOnly(cl, args);
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    private static int parseOnly(CommandLine cl, String... args) {
        try {
            cl.parseArgs(args);
            ((IngesterMain) cl.getCommand()).config();
            return 0;
        } catch (CommandLine.ParameterException e) {
            cl.getErr().println(e.getMessage());
            cl.getErr().flush();
            return 2;
        }
    }

    @Test
    void helpListsEveryFlagWithItsDefault() {
        String[] r = run("--help");
        assertThat(r[0]).isEqualTo("0");
        assertThat(r[1])
                .contains(
                        "--etcd-endpoints",
                        "--kafka-bootstrap",
                        "--topic-prefix",
                        "--key-prefix",
                        "--http-port",
                        "Default: 9100",
                        "--max-record-bytes",
                        "Default: 8MiB",
                        "WATCHFANOUT_");
    }

    @Test
    void requiredFlagsAndRangesAreChecked() {
        assertThat(run("--kafka-bootstrap", "k:9092")[2]).contains("Missing required option --topic-prefix");
        String[] noEtcd = run(withRequired());
        assertThat(noEtcd[0]).isEqualTo("2");
        assertThat(noEtcd[2])
                .contains(
                        "Missing required option --etcd-endpoints (or environment variable WATCHFANOUT_ETCD_ENDPOINTS)"
                                + ", unless --no-publisher");
        String[] bad = run(withRequired("--etcd-endpoints", "http://e:2379", "--state-partitions", "0"));
        assertThat(bad[0]).isEqualTo("2");
        assertThat(bad[2]).contains("--state-partitions: 0 (expected: >= 1)");
        String[] duration = run(withRequired("--etcd-endpoints", "http://e:2379", "--transaction-timeout", "soon"));
        assertThat(duration[2]).contains("'soon' is not a duration");
        String[] key = run(withRequired("--etcd-endpoints", "http://e:2379", "--key-prefix", "/a%zz"));
        assertThat(key[2]).contains("--key-prefix").contains("malformed escape");
        String[] isr = run(withRequired(
                "--etcd-endpoints", "http://e:2379", "--replication-factor", "3", "--min-insync-replicas", "4"));
        assertThat(isr[0]).isEqualTo("2");
        assertThat(isr[2]).contains("--min-insync-replicas: 4 (expected: <= --replication-factor 3)");
    }

    @Test
    void defaultsFollowTheTopicPrefixAndKeysArePercentDecoded() {
        CommandLine cl = IngesterMain.commandLine();
        cl.parseArgs(
                "--etcd-endpoints",
                "http://a:2379,http://b:2379",
                "--kafka-bootstrap",
                "k:9092",
                "--topic-prefix",
                "watch",
                "--key-prefix",
                "/registry/%00");
        IngesterConfig config = ((IngesterMain) cl.getCommand()).config();
        assertThat(config.etcd().endpoints()).containsExactly("http://a:2379", "http://b:2379");
        assertThat(config.commit().transactionalId()).isEqualTo("watch.ingester");
        assertThat(config.etcd().keyPrefix().toByteArray()).endsWith(0);
        assertThat(config.kafka().maxRecordBytes()).isEqualTo(8 << 20);
        assertThat(config.roles().materializer()).isTrue();
    }

    /** Runs the command line as {@code main} does, up to the point where it would start. */
    private static String[] execute(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = IngesterMain.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        cl.setExecutionStrategy(parseResult -> {
            ((IngesterMain) cl.getCommand()).config(); // the validation of call(), without starting
            return 0;
        });
        int code = cl.execute(args);
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    private static final String[] REQUIRED = {"--kafka-bootstrap", "k:9092", "--topic-prefix", "t"};

    private static String[] withRequired(String... args) {
        String[] all = new String[REQUIRED.length + args.length];
        System.arraycopy(REQUIRED, 0, all, 0, REQUIRED.length);
        System.arraycopy(args, 0, all, REQUIRED.length, args.length);
        return all;
    }

    @Test
    void aProcessWithoutThePublisherMaterializesAndNeedsNoEtcd() {
        CommandLine cl = IngesterMain.commandLine();
        cl.parseArgs(withRequired("--no-publisher"));
        IngesterConfig config = ((IngesterMain) cl.getCommand()).config();
        assertThat(config.roles().publisher()).isFalse();
        assertThat(config.roles().materializer()).isTrue();
        assertThat(config.etcd().endpoints()).isEmpty();
        String[] nothing = run(withRequired("--no-publisher", "--no-materializer"));
        assertThat(nothing[0]).isEqualTo("2");
        assertThat(nothing[2])
                .contains("--no-publisher and --no-materializer leave nothing to run (expected: at most one of them)");
    }

    @Test
    void etcdEndpointsTakeHostPortAsEtcdctlDoes() {
        CommandLine cl = IngesterMain.commandLine();
        cl.parseArgs(withRequired("--etcd-endpoints", "127.0.0.1:2379,https://etcd-1:2379"));
        assertThat(((IngesterMain) cl.getCommand()).config().etcd().endpoints())
                .containsExactly("http://127.0.0.1:2379", "https://etcd-1:2379");
    }

    @Test
    void anInvalidEtcdEndpointIsAUsageErrorNamingTheFlag() {
        String[] r = execute(withRequired("--etcd-endpoints", "127.0.0.1:2379,etcd:port"));
        assertThat(r[0]).isEqualTo("2");
        assertThat(r[2])
                .contains("--etcd-endpoints")
                .contains("'etcd:port' is not an etcd endpoint")
                .doesNotContain("Exception")
                .doesNotContain("\tat ");
    }

    @Test
    void sizesTakeOnlyTheDocumentedUnits() {
        String[] r = execute(withRequired("--etcd-endpoints", "127.0.0.1:2379", "--watch-queue-bytes", "64MB"));
        assertThat(r[0]).isEqualTo("2");
        assertThat(r[2])
                .contains("--watch-queue-bytes")
                .contains("'64MB' is not a byte size")
                .contains("write 64MiB")
                .doesNotContain("Exception");
        assertThat(execute(withRequired("--etcd-endpoints", "127.0.0.1:2379", "--max-record-bytes", "64mb"))[0])
                .isEqualTo("2");
        CommandLine cl = IngesterMain.commandLine();
        cl.parseArgs(withRequired("--etcd-endpoints", "e:2379", "--watch-queue-bytes", "32Mi"));
        assertThat(((IngesterMain) cl.getCommand()).config().etcd().watchQueueBytes())
                .isEqualTo(32 << 20);
    }

    @Test
    void etcdAndKafkaSecurityFlagsAreReadAtStartupAndTheirMistakesNamed() throws Exception {
        java.nio.file.Path dir = Files.createTempDirectory("ingester-security");
        java.nio.file.Path password = Files.writeString(dir.resolve("password"), "s3cret\n");
        java.nio.file.Path kafka = Files.writeString(dir.resolve("kafka.properties"), "security.protocol=SASL_SSL\n");
        CommandLine cl = IngesterMain.commandLine();
        cl.parseArgs(withRequired(
                "--etcd-endpoints", "https://e:2379",
                "--etcd-cacert", "ca.pem",
                "--etcd-user", "ingester",
                "--etcd-password-file", password.toString(),
                "--kafka-config", kafka.toString()));
        IngesterConfig config = ((IngesterMain) cl.getCommand()).config();
        assertThat(config.etcd().security().password()).isEqualTo("s3cret");
        assertThat(config.etcd().security().caCert()).hasToString("ca.pem");
        assertThat(config.kafka().settings().asMap()).containsEntry("security.protocol", "SASL_SSL");
        assertThat(config.toString()).doesNotContain("s3cret");

        Files.writeString(kafka, "transactional.id=mine\n");
        String[] refused = execute(withRequired("--etcd-endpoints", "e:2379", "--kafka-config", kafka.toString()));
        assertThat(refused[0]).isEqualTo("2");
        assertThat(refused[2]).contains("--kafka-config").contains("transactional.id may not be set");
        String[] missing = execute(withRequired("--etcd-endpoints", "e:2379", "--kafka-config", "/no/such.properties"));
        assertThat(missing[0]).isEqualTo("2");
        assertThat(missing[2]).contains("--kafka-config").contains("/no/such.properties: no such file");
        String[] noPassword = execute(withRequired("--etcd-endpoints", "e:2379", "--etcd-user", "ingester"));
        assertThat(noPassword[2]).contains("--etcd-user and --etcd-password-file go together");
        String[] noFile = execute(withRequired(
                "--etcd-endpoints", "e:2379", "--etcd-user", "u", "--etcd-password-file", "/no/such/password"));
        assertThat(noFile[0]).isEqualTo("2");
        assertThat(noFile[2]).contains("--etcd-password-file: /no/such/password: no such file");
        String[] plain = execute(withRequired("--etcd-endpoints", "e:2379", "--etcd-cacert", "ca.pem"));
        assertThat(plain[2]).contains("expected: https:// --etcd-endpoints");
    }

    @Test
    void durationMessagesShowTheValueInTheFlagsOwnSyntax() {
        String[] r = execute(withRequired("--etcd-endpoints", "e:2379", "--election-lease-ttl", "1500ms"));
        assertThat(r[0]).isEqualTo("2");
        assertThat(r[2])
                .contains("--election-lease-ttl: 1500ms (expected: >= 2s)")
                .doesNotContain("PT");
    }

    /** The ingester as a child process, against etcd and Kafka ports where nothing listens, with {@code args}. */
    private static JavaProcess startIngester(String name, String... args) {
        String[] all = {"--etcd-endpoints", "127.0.0.1:1", "--kafka-bootstrap", "127.0.0.1:1", "--topic-prefix", "t"};
        String[] withArgs = java.util.Arrays.copyOf(all, all.length + args.length);
        System.arraycopy(args, 0, withArgs, all.length, args.length);
        return JavaProcess.builder(IngesterMain.class.getName())
                .name(name)
                .maxHeap("128m")
                .args(withArgs)
                .start();
    }

    @Test
    void aTakenHttpPortIsOneLineNamingTheFlagAndTheAddressWithoutAStackTrace() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                JavaProcess ingester = startIngester(
                        "ingester-port-taken",
                        "--http-host",
                        "127.0.0.1",
                        "--http-port",
                        Integer.toString(taken.getLocalPort()))) {
            assertThat(ingester.waitForExit(Duration.ofSeconds(120))).hasValue(1);
            String output = Files.readString(ingester.logFile());
            assertThat(output)
                    .contains("ingester: --http-host/--http-port: cannot listen on 127.0.0.1:" + taken.getLocalPort()
                            + ": Address already in use")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
        }
    }

    @Test
    void tlsFilesAreInTheConfigurationAndACertificateWithoutAKeyIsAUsageError() {
        CommandLine cl = IngesterMain.commandLine();
        cl.parseArgs(withRequired(
                "--etcd-endpoints",
                "http://e:2379",
                "--tls-cert-file",
                "c.pem",
                "--tls-key-file",
                "k.pem",
                "--client-ca-file",
                "ca.pem"));
        IngesterConfig config = ((IngesterMain) cl.getCommand()).config();
        assertThat(config.operations().tls().certFile()).isEqualTo(Path.of("c.pem"));
        assertThat(config.operations().tls().keyFile()).isEqualTo(Path.of("k.pem"));
        assertThat(config.operations().tls().clientCaFile()).isEqualTo(Path.of("ca.pem"));
        String[] certOnly = run(withRequired("--etcd-endpoints", "http://e:2379", "--tls-cert-file", "c.pem"));
        assertThat(certOnly[0]).isEqualTo("2");
        assertThat(certOnly[2])
                .contains("--tls-cert-file without --tls-key-file (expected: both --tls-cert-file and --tls-key-file, "
                        + "or neither)");
    }

    @Test
    void aMissingTlsFileIsOneLineNamingTheFlagWithoutAStackTrace(@TempDir Path dir) throws Exception {
        Pki.Issued server = Pki.create(dir, "ca").server("ingester", "ingester");
        Path missing = dir.resolve("missing-key.pem");
        try (JavaProcess ingester = startIngester(
                "ingester-tls-missing",
                "--http-host",
                "127.0.0.1",
                "--http-port",
                "0",
                "--tls-cert-file",
                server.cert().toString(),
                "--tls-key-file",
                missing.toString())) {
            assertThat(ingester.waitForExit(Duration.ofSeconds(120))).hasValue(1);
            assertThat(Files.readString(ingester.logFile()))
                    .contains("ingester: --tls-key-file " + missing + ": no such file")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
        }
    }

    @Test
    void theReadmeFlagTableEqualsHelp() {
        org.assertj.core.api.Assertions.assertThat(
                        io.watchfanout.testkit.ReadmeFlags.differences(IngesterMain.commandLine(), "ingester"))
                .as("README.md's flag table 'ingester' against --help")
                .isEmpty();
    }
}
