package io.watchfanout.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.Pki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class FanoutNodeMainTest {
    /** The flags every run needs, so that each test names only what it is about. */
    private static final String[] REQUIRED = {
        "--kafka-bootstrap", "k:9092", "--topic-prefix", "w", "--port", "1", "--anonymous"
    };

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
    void flagsAndEnvironmentAndDefaults() {
        FanoutNodeMain main = new FanoutNodeMain();
        cli(main, Map.of("WATCHFANOUT_TOPIC_PREFIX", "watch", "WATCHFANOUT_HISTORY_MAX_AGE", "2m"), new StringWriter())
                .parseArgs(
                        "--kafka-bootstrap",
                        "127.0.0.1:9092",
                        "--port",
                        "8081",
                        "--bookmark-interval",
                        "500ms",
                        "--anonymous");
        NodeConfig c = main.toConfig();
        assertThat(c.feed().topicPrefix()).isEqualTo("watch");
        assertThat(c.core().historyMaxAge()).isEqualTo(Duration.ofMinutes(2));
        assertThat(c.core().bookmarkInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(c.core().resourceVersionWait()).isEqualTo(Duration.ofSeconds(3));
        assertThat(c.kube().prefix()).isEqualTo("/registry");
        assertThat(c.core().historyMaxEvents()).isEqualTo(100_000);
        assertThat(c.http().bindAddress()).isEqualTo("127.0.0.1");
        assertThat(c.nodeId()).endsWith("-8081");
        assertThat(c.http().stalledCloseAfter()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.core().watcherQueueFrames()).isEqualTo(256);
        assertThat(c.http().writeTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.http().tcpKeepalive().idle()).isEqualTo(Duration.ofSeconds(15));
        assertThat(c.http().tcpKeepalive().interval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.http().tcpKeepalive().count()).isEqualTo(3);
    }

    @Test
    void keepaliveAndWriteTimeoutFlags() {
        FanoutNodeMain main = new FanoutNodeMain();
        cli(main, Map.of("WATCHFANOUT_TCP_KEEPALIVE_COUNT", "5"), new StringWriter())
                .parseArgs(withRequired(
                        "--write-timeout", "1500ms", "--tcp-keepalive-idle", "1m", "--tcp-keepalive-interval", "2s"));
        NodeConfig c = main.toConfig();
        assertThat(c.http().writeTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.http().tcpKeepalive().idle()).isEqualTo(Duration.ofMinutes(1));
        assertThat(c.http().tcpKeepalive().interval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.http().tcpKeepalive().count()).isEqualTo(5);
    }

    @Test
    void badKeepaliveAndWriteTimeoutFlagsExitWithStatus2() {
        String[][] cases = {
            {"--tcp-keepalive-idle", "1500ms", "--tcp-keepalive-idle: 1500ms (expected: whole seconds, 1s..32767s)"},
            {"--tcp-keepalive-idle", "0s", "--tcp-keepalive-idle: 0s (expected: whole seconds, 1s..32767s)"},
            {"--tcp-keepalive-interval", "10h", "--tcp-keepalive-interval: 10h (expected: whole seconds, 1s..32767s)"},
            {"--tcp-keepalive-count", "0", "--tcp-keepalive-count: 0 (expected: 1..127)"},
            {"--tcp-keepalive-count", "128", "--tcp-keepalive-count: 128 (expected: 1..127)"},
            {"--write-timeout", "0s", "--write-timeout: 0s (expected: >= 1ms)"},
            {"--kafka-bootstrap", "nohost", "is not a Kafka bootstrap list"},
            {"--deep-read-max-bytes", "64MB", "could mean powers of 1000 or of 1024"},
            {"--deep-read-max-readers", "-1", "--deep-read-max-readers: -1 (expected: >= 0)"},
            {"--kube-prefix", "registry", "--kube-prefix: 'registry' (expected: starting with /"},
        };
        for (String[] c : cases) {
            StringWriter err = new StringWriter();
            assertThat(cli(new FanoutNodeMain(), Map.of(), err).execute(withRequired(c[0], c[1])))
                    .as(c[0] + " " + c[1])
                    .isEqualTo(2);
            assertThat(err.toString()).contains(c[2]);
        }
    }

    @Test
    void corsAllowedOriginsAreNoneByDefaultAndParsedFromTheFlagOrTheEnvironment() {
        FanoutNodeMain none = new FanoutNodeMain();
        cli(none, Map.of(), new StringWriter()).parseArgs(withRequired());
        assertThat(none.toConfig().http().corsAllowedOrigins()).isEmpty();
        FanoutNodeMain flag = new FanoutNodeMain();
        cli(flag, Map.of(), new StringWriter())
                .parseArgs(withRequired("--cors-allowed-origins", "https://a.example,http://127.0.0.1:8080"));
        assertThat(flag.toConfig().http().corsAllowedOrigins())
                .containsExactly("https://a.example", "http://127.0.0.1:8080");
        FanoutNodeMain env = new FanoutNodeMain();
        cli(env, Map.of("WATCHFANOUT_CORS_ALLOWED_ORIGINS", "*"), new StringWriter())
                .parseArgs(withRequired());
        assertThat(env.toConfig().http().corsAllowedOrigins()).containsExactly("*");
        StringWriter err = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), err)
                        .execute(withRequired("--cors-allowed-origins", "https://a.example/app")))
                .isEqualTo(2);
        assertThat(err.toString())
                .contains("--cors-allowed-origins: 'https://a.example/app' (expected: origins such as");
    }

    @Test
    void etcdAndKafkaSecurityFlagsAreReadAtStartupAndTheirMistakesNamed() throws Exception {
        java.nio.file.Path dir = Files.createTempDirectory("node-security");
        java.nio.file.Path password = Files.writeString(dir.resolve("password"), "s3cret\n");
        java.nio.file.Path kafka = Files.writeString(dir.resolve("kafka.properties"), "sasl.mechanism=PLAIN\n");
        FanoutNodeMain main = new FanoutNodeMain();
        cli(main, Map.of("WATCHFANOUT_KAFKA_CONFIG", kafka.toString()), new StringWriter())
                .parseArgs(withRequired(
                        "--etcd-endpoints", "https://e:2379",
                        "--etcd-cert", "c.pem",
                        "--etcd-key", "k.pem",
                        "--etcd-user", "node",
                        "--etcd-password-file", password.toString()));
        NodeConfig c = main.toConfig();
        assertThat(c.etcd().security().password()).isEqualTo("s3cret");
        assertThat(c.etcd().security().cert()).hasToString("c.pem");
        assertThat(c.feed().kafkaSettings().asMap()).containsEntry("sasl.mechanism", "PLAIN");
        assertThat(c.toString()).doesNotContain("s3cret");

        Files.writeString(kafka, "isolation.level=read_uncommitted\n");
        StringWriter refused = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), refused)
                        .execute(withRequired("--kafka-config", kafka.toString())))
                .isEqualTo(2);
        assertThat(refused.toString()).contains("--kafka-config").contains("isolation.level may not be set");
        StringWriter half = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), half).execute(withRequired("--etcd-cert", "c.pem")))
                .isEqualTo(2);
        assertThat(half.toString()).contains("--etcd-cert and --etcd-key go together");
    }

    @Test
    void badFlagsExitWithStatus2AndSayWhatWasExpected() {
        StringWriter err = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), err).execute(withRequired("--bookmark-interval", "5")))
                .isEqualTo(2);
        assertThat(err.toString()).contains("'5' is not a duration").contains("expected: a whole number and a unit");
        StringWriter missing = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), missing).execute("--port", "1"))
                .isEqualTo(2);
        assertThat(missing.toString()).contains("--kafka-bootstrap").contains("WATCHFANOUT_KAFKA_BOOTSTRAP");
        StringWriter invalid = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), invalid).execute(withRequired("--history-max-events", "0")))
                .isEqualTo(2);
        assertThat(invalid.toString()).contains("--history-max-events: 0 (expected: >= 1)");
    }

    @Test
    void helpListsEveryFlagWithItsDefault() {
        StringWriter out = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), out).execute("--help")).isZero();
        assertThat(out.toString())
                .contains(
                        "--kafka-bootstrap",
                        "--topic-prefix",
                        "--port",
                        "--bookmark-interval",
                        "--history-max-events",
                        "--history-max-age",
                        "--resource-version-wait",
                        "--node-id",
                        "--bind-address",
                        "--watcher-queue-frames",
                        "--stalled-close-after",
                        "--write-timeout",
                        "--tcp-keepalive-idle",
                        "--tcp-keepalive-interval",
                        "--tcp-keepalive-count",
                        "default: 15s",
                        "default: 3",
                        "default: 5s",
                        "default: 30s",
                        "default: 100000",
                        "default: 10m",
                        "WATCHFANOUT_");
    }

    @Test
    void durationMessagesShowTheValueInTheFlagsOwnSyntax() {
        StringWriter err = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), err).execute(withRequired("--bookmark-interval", "0s")))
                .isEqualTo(2);
        assertThat(err.toString())
                .contains("--bookmark-interval: 0s (expected: > 0)")
                .doesNotContain("PT0S");
        StringWriter age = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of("WATCHFANOUT_HISTORY_MAX_AGE", "0ms"), age)
                        .execute(withRequired()))
                .isEqualTo(2);
        assertThat(age.toString()).contains("--history-max-age: 0s (expected: >= 1ms)");
    }

    /** The node as a child process, against a Kafka port where nothing listens, with {@code args}. */
    private static JavaProcess startNode(String name, String... args) {
        String[] all = {"--kafka-bootstrap", "127.0.0.1:1", "--topic-prefix", "t", "--anonymous"};
        String[] withArgs = java.util.Arrays.copyOf(all, all.length + args.length);
        System.arraycopy(args, 0, withArgs, all.length, args.length);
        return JavaProcess.builder(FanoutNodeMain.class.getName())
                .name(name)
                .maxHeap("128m")
                .args(withArgs)
                .start();
    }

    @Test
    void aTakenPortIsOneLineNamingTheFlagAndTheAddressWithoutAStackTrace() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                JavaProcess node = startNode(
                        "node-port-taken",
                        "--bind-address",
                        "127.0.0.1",
                        "--port",
                        Integer.toString(taken.getLocalPort()))) {
            assertThat(node.waitForExit(Duration.ofSeconds(120))).hasValue(1);
            String output = Files.readString(node.logFile());
            assertThat(output)
                    .contains("fanout-node: --bind-address/--port: cannot listen on 127.0.0.1:" + taken.getLocalPort()
                            + ": Address already in use")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
        }
    }

    @Test
    void aNodeNeedsAnAuthenticationMethodOrAnonymousAndAuthenticationNeedsAuthz() {
        String[] base = {"--kafka-bootstrap", "k:9092", "--topic-prefix", "w", "--port", "1"};
        StringWriter none = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), none).execute(base)).isEqualTo(2);
        assertThat(none.toString()).contains("no way to authenticate clients").contains("--anonymous");
        StringWriter noAuthz = new StringWriter();
        String[] tokens = java.util.Arrays.copyOf(base, base.length + 2);
        tokens[base.length] = "--token-auth-file";
        tokens[base.length + 1] = "/etc/tokens.csv";
        assertThat(cli(new FanoutNodeMain(), Map.of(), noAuthz).execute(tokens)).isEqualTo(2);
        assertThat(noAuthz.toString()).contains("authentication without --authz would deny every request");
        StringWriter badAuthz = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), badAuthz).execute(withRequired("--authz", "rbac")))
                .isEqualTo(2);
        assertThat(badAuthz.toString()).contains("--authz: 'rbac' (expected: file:PATH or etcd)");
        StringWriter badMethod = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), badMethod).execute(withRequired("--http-authn", "jwt")))
                .isEqualTo(2);
        assertThat(badMethod.toString()).contains("--http-authn: method \"jwt\" is not configured");
        FanoutNodeMain open = new FanoutNodeMain();
        cli(open, Map.of(), new StringWriter()).parseArgs(withRequired());
        assertThat(open.toConfig().security().access().isOpen()).isTrue();
    }

    @Test
    void tlsFilesAreInTheConfigurationAlsoFromTheEnvironment() {
        FanoutNodeMain main = new FanoutNodeMain();
        cli(main, Map.of("WATCHFANOUT_CLIENT_CA_FILE", "ca.pem"), new StringWriter())
                .parseArgs(withRequired("--tls-cert-file", "c.pem", "--tls-key-file", "k.pem"));
        NodeConfig config = main.toConfig();
        assertThat(config.security().tls().certFile()).isEqualTo(Path.of("c.pem"));
        assertThat(config.security().tls().keyFile()).isEqualTo(Path.of("k.pem"));
        assertThat(config.security().tls().clientCaFile()).isEqualTo(Path.of("ca.pem"));
        FanoutNodeMain plain = new FanoutNodeMain();
        cli(plain, Map.of(), new StringWriter()).parseArgs(withRequired());
        assertThat(plain.toConfig().security().tls()).isNull();
    }

    @Test
    void incompleteTlsFlagsAreUsageErrors() {
        StringWriter err = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), err).execute(withRequired("--tls-cert-file", "c.pem")))
                .isEqualTo(2);
        assertThat(err.toString())
                .contains("--tls-cert-file without --tls-key-file (expected: both --tls-cert-file and --tls-key-file, "
                        + "or neither)");
        StringWriter caOnly = new StringWriter();
        assertThat(cli(new FanoutNodeMain(), Map.of(), caOnly).execute(withRequired("--client-ca-file", "ca.pem")))
                .isEqualTo(2);
        assertThat(caOnly.toString()).contains("--client-ca-file needs --tls-cert-file and --tls-key-file");
    }

    @Test
    void aBadTlsFileIsOneLineNamingTheFlagWithoutAStackTrace(@TempDir Path dir) throws Exception {
        Pki.Issued server = Pki.create(dir, "ca").server("node", "node");
        Path garbage = dir.resolve("garbage.pem");
        Files.writeString(garbage, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
        Path missing = dir.resolve("missing-key.pem");
        try (JavaProcess bad = startNode(
                        "node-tls-garbage",
                        "--port",
                        "0",
                        "--tls-cert-file",
                        garbage.toString(),
                        "--tls-key-file",
                        server.key().toString());
                JavaProcess absent = startNode(
                        "node-tls-missing",
                        "--port",
                        "0",
                        "--tls-cert-file",
                        server.cert().toString(),
                        "--tls-key-file",
                        missing.toString())) {
            assertThat(bad.waitForExit(Duration.ofSeconds(120))).hasValue(1);
            assertThat(Files.readString(bad.logFile()))
                    .contains("fanout-node: --tls-cert-file " + garbage + ": unreadable certificate PEM")
                    .doesNotContain("\tat ");
            assertThat(absent.waitForExit(Duration.ofSeconds(120))).hasValue(1);
            assertThat(Files.readString(absent.logFile()))
                    .contains("fanout-node: --tls-key-file " + missing + ": no such file")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
        }
    }

    @Test
    void anUnreadableSecurityFileIsAOneLineStartupErrorNamingTheFlag(@org.junit.jupiter.api.io.TempDir Path dir)
            throws java.io.IOException {
        Path policy = dir.resolve("policy.json");
        java.nio.file.Files.writeString(policy, "{\"rules\": []}");
        Path missing = dir.resolve("tokens.csv");
        StringWriter err = new StringWriter();

        int status = cli(new FanoutNodeMain(), Map.of(), err)
                .execute(withRequired("--token-auth-file", missing.toString(), "--authz", "file:" + policy));

        assertThat(status).isEqualTo(1);
        assertThat(err.toString().strip()).isEqualTo("fanout-node: --token-auth-file: " + missing + ": no such file");
    }

    @Test
    void theReadmeFlagTableEqualsHelp() {
        org.assertj.core.api.Assertions.assertThat(io.watchfanout.testkit.ReadmeFlags.differences(
                        new picocli.CommandLine(new FanoutNodeMain()), "fanout-node"))
                .as("README.md's flag table 'fanout-node' against --help")
                .isEmpty();
    }
}
