package io.watchfanout.localstack;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.EnvironmentDefaults;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class LocalStackMainTest {
    private static CommandLine cli(LocalStackMain main, Map<String, String> env, StringWriter out) {
        CommandLine cl = new CommandLine(main).setDefaultValueProvider(new EnvironmentDefaults(env));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(out, true));
        return cl;
    }

    @Test
    void defaultsAreTheAddressesOfTheReadme() {
        LocalStackMain main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter()).parseArgs();
        StackConfig c = main.config();
        assertThat(c.etcdUrl()).isEqualTo("http://127.0.0.1:2379");
        assertThat(c.etcdPeerPort()).isEqualTo(2380);
        assertThat(c.kafkaBootstrap()).isEqualTo("127.0.0.1:9092");
        assertThat(c.kafkaControllerPort()).isEqualTo(9093);
        assertThat(c.kafkaBrokers()).isEqualTo(1);
        assertThat(c.kafkaReplicationFactor()).isEqualTo(1);
        assertThat(c.ingesterPort()).isEqualTo(9100);
        assertThat(c.fanoutPorts()).containsExactly(8081, 8082);
        assertThat(c.dataDir()).isEmpty();
        assertThat(c.topicPrefix()).isEqualTo("watch");
        assertThat(c.demo()).isFalse();
        assertThat(c.demoRate()).isEqualTo(20);
        assertThat(c.startTimeout()).isEqualTo(Duration.ofSeconds(120));
        assertThat(c.ingesterJar()).endsWith(Path.of("ingester", "target", "ingester.jar"));
        assertThat(c.fanoutNodeJar()).endsWith(Path.of("fanout-node", "target", "fanout-node.jar"));
    }

    @Test
    void flagsWinOverTheEnvironmentWhichWinsOverDefaults() {
        LocalStackMain main = new LocalStackMain();
        cli(
                        main,
                        Map.of(
                                "WATCHFANOUT_ETCD_PORT",
                                "12379",
                                "WATCHFANOUT_DEMO",
                                "true",
                                "WATCHFANOUT_FANOUT_PORTS",
                                "18081,18082,18083",
                                "WATCHFANOUT_FANOUT_ETCD_PORTS",
                                "28081,28082,28083",
                                "WATCHFANOUT_KAFKA_PORT",
                                "19092"),
                        new StringWriter())
                .parseArgs("--kafka-port", "29092", "--data-dir", "some/dir", "--start-timeout", "30s");
        StackConfig c = main.config();
        assertThat(c.etcdPort()).isEqualTo(12379);
        assertThat(c.etcdPeerPort()).isEqualTo(12380);
        assertThat(c.kafkaPort()).isEqualTo(29092);
        assertThat(c.kafkaControllerPort()).isEqualTo(29093);
        assertThat(c.fanoutPorts()).containsExactly(18081, 18082, 18083);
        assertThat(c.fanoutEtcdPorts()).containsExactly(28081, 28082, 28083);
        assertThat(c.demo()).isTrue();
        assertThat(c.dataDir()).isEqualTo(Optional.of(Path.of("some/dir")));
        assertThat(c.startTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void threeBrokersTakeEveryOtherPortFromTheKafkaPortsOn() {
        LocalStackMain main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter()).parseArgs("--kafka-brokers", "3");
        StackConfig c = main.config();
        assertThat(c.kafkaPorts()).containsExactly(9092, 9094, 9096);
        assertThat(c.kafkaControllerPorts()).containsExactly(9093, 9095, 9097);
        assertThat(c.kafkaBootstrap()).isEqualTo("127.0.0.1:9092,127.0.0.1:9094,127.0.0.1:9096");
        assertThat(c.kafkaReplicationFactor()).isEqualTo(3);
        assertThat(c.kafkaMinInsyncReplicas()).isEqualTo(2);
    }

    @Test
    void badFlagsExitWithStatus2AndSayWhatWasExpected() {
        assertRejected(
                List.of("--etcd-port", "2379", "--fanout-ports", "8081,2379"), "port 2379 is also used by --etcd-port");
        assertRejected(List.of("--etcd-port", "70000"), "--etcd-port: 70000 (expected: a TCP port, 1..65535)");
        assertRejected(List.of("--demo-rate", "0"), "--demo-rate: 0 (expected: 1..10000 writes per second)");
        assertRejected(List.of("--topic-prefix", "a/b"), "--topic-prefix: 'a/b'");
        assertRejected(List.of("--start-timeout", "soon"), "is not a duration");
        assertRejected(List.of("--start-timeout", "0s"), "--start-timeout: 0s (expected: > 0)");
        assertRejected(List.of("--ingester-jar", "/no/such.jar"), "/no/such.jar does not exist");
        assertRejected(List.of("--kafka-brokers", "2"), "--kafka-brokers: 2 (expected: 1, or 3 to 5");
        assertRejected(
                List.of("--kafka-brokers", "3", "--kafka-port", "9092", "--ingester-port", "9094"),
                "--ingester-port: port 9094 is also used by --kafka-port (+2 for broker 2 of --kafka-brokers)");
    }

    @Test
    void derivedPortsMoveOffTheDefaultsInsteadOfRefusingTheStart() {
        // The README's advice when 2379 is taken: etcd's peer port would be 23791, a node's etcd API port.
        LocalStackMain main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter()).parseArgs("--etcd-port", "23790");
        StackConfig c = main.config();
        assertThat(c.etcdPort()).isEqualTo(23790);
        assertThat(c.etcdPeerPort()).isEqualTo(23793);
        assertThat(c.fanoutEtcdPorts()).containsExactly(23791, 23792);

        // Three brokers from 9099: the controllers' 9100 is the ingester's; the next base whose three
        // ports (two apart) are nobody's is 9102.
        main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter()).parseArgs("--kafka-port", "9099", "--kafka-brokers", "3");
        c = main.config();
        assertThat(c.kafkaPorts()).containsExactly(9099, 9101, 9103);
        assertThat(c.kafkaControllerPorts()).containsExactly(9102, 9104, 9106);

        // Five brokers take 9092 to 9100: the ingester's default moves to 9101, the controllers past it.
        main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter()).parseArgs("--kafka-brokers", "5");
        c = main.config();
        assertThat(c.kafkaPorts()).containsExactly(9092, 9094, 9096, 9098, 9100);
        assertThat(c.ingesterPort()).isEqualTo(9101);
        assertThat(c.kafkaControllerPorts()).containsExactly(9102, 9104, 9106, 9108, 9110);

        // A port the user gave (here in the environment) pushes a default away, not the reverse.
        main = new LocalStackMain();
        cli(main, Map.of("WATCHFANOUT_INGESTER_PORT", "8081"), new StringWriter())
                .parseArgs();
        c = main.config();
        assertThat(c.ingesterPort()).isEqualTo(8081);
        assertThat(c.fanoutPorts()).containsExactly(8082, 8083);

        // Ports the user gave are never moved: a collision of two of them is refused.
        assertRejected(
                List.of("--etcd-port", "23790", "--etcd-peer-port", "23791", "--fanout-etcd-ports", "23791,23792"),
                "--fanout-etcd-ports: port 23791 is also used by --etcd-peer-port");
    }

    @Test
    void moreFanoutPortsThanDefaultEtcdPortsGetOneEtcdPortEach() {
        LocalStackMain main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter()).parseArgs("--fanout-ports", "8081,8082,8083");
        assertThat(main.config().fanoutEtcdPorts()).containsExactly(23791, 23792, 23793);

        // A port the user gave elsewhere is stepped over; one node takes one.
        main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter())
                .parseArgs("--fanout-ports", "8081,8082,8083", "--ingester-port", "23793");
        assertThat(main.config().fanoutEtcdPorts()).containsExactly(23791, 23792, 23794);
        main = new LocalStackMain();
        cli(main, Map.of(), new StringWriter()).parseArgs("--fanout-ports", "8081");
        assertThat(main.config().fanoutEtcdPorts()).containsExactly(23791);
    }

    @Test
    void anOnOffFlagThatIsNeitherSaysWhatWasExpected() {
        StringWriter out = new StringWriter();
        assertThat(cli(new LocalStackMain(), Map.of("WATCHFANOUT_DEMO", "maybe"), out)
                        .execute("--ingester-jar", "/no/such/ingester.jar"))
                .isEqualTo(2);
        assertThat(out.toString()).contains("WATCHFANOUT_DEMO (--demo): 'maybe' (expected: true or false)");
        LocalStackMain main = new LocalStackMain();
        cli(main, Map.of("WATCHFANOUT_DEMO", "TRUE"), new StringWriter()).parseArgs("--secure");
        assertThat(main.config().demo()).isTrue();
        assertThat(main.config().secure()).isTrue();
    }

    @Test
    void aNumberFlagThatIsNotANumberSaysWhatWasExpected() {
        assertRejected(
                List.of("--etcd-port=abc"),
                "Invalid value for option '--etcd-port': 'abc' is not a whole number (expected: digits, e.g. 8081");
        assertRejected(
                List.of("--fanout-ports=8081,abc"),
                "Invalid value for option '--fanout-ports' (PORTS): 'abc' is not a whole number (expected: digits");
    }

    @Test
    void aDataDirThatCannotBeOneIsAUsageError(@TempDir Path tmp) throws Exception {
        List<String> jars = jars(tmp);
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        assertRejected(concat(jars, "--data-dir", file.toString()), "--data-dir: " + file + " is a file");
        assertRejected(
                concat(jars, "--data-dir", file.resolve("below").toString()),
                "--data-dir: cannot create " + file.resolve("below"));
    }

    @Test
    void anEmptyDataDirIsAUsageErrorNotTheWorkingDirectory(@TempDir Path tmp) throws Exception {
        List<String> jars = jars(tmp);
        assertRejected(concat(jars, "--data-dir="), "--data-dir: empty (expected: a directory");
        assertRejected(concat(jars, "--data-dir", "  "), "--data-dir: empty (expected: a directory");
    }

    @Test
    void aDataDirBelowAMissingDirectorySaysSoWithoutAJavaClassName(@TempDir Path tmp) throws Exception {
        Path missing = Path.of("/proc/no-such-dir/x");
        StringWriter out = new StringWriter();
        assertThat(cli(new LocalStackMain(), Map.of(), out)
                        .execute(concat(jars(tmp), "--data-dir", missing.toString())
                                .toArray(String[]::new)))
                .isEqualTo(2);
        assertThat(out.toString())
                .contains("--data-dir: cannot create " + missing + ": /proc/no-such-dir does not exist")
                .doesNotContain("Exception");
    }

    @Test
    void aDataDirOfAnotherNumberOfBrokersIsRefusedNamingBoth(@TempDir Path tmp) throws Exception {
        List<String> jars = jars(tmp);
        Path single = tmp.resolve("single");
        Files.createDirectories(single.resolve("kafka/data"));
        Files.writeString(single.resolve("kafka/data/meta.properties"), "cluster.id=abc\n");
        assertRejected(
                concat(jars, "--data-dir", single.toString(), "--kafka-brokers", "3"),
                "--kafka-brokers 3 with --data-dir " + single
                        + ", whose Kafka data was made by --kafka-brokers 1 (expected: --kafka-brokers 1 to resume it");
        Path three = tmp.resolve("three");
        for (int n = 1; n <= 3; n++) {
            Files.createDirectories(three.resolve("kafka-" + n + "/data"));
            Files.writeString(three.resolve("kafka-" + n + "/data/meta.properties"), "cluster.id=abc\n");
        }
        assertRejected(
                concat(jars, "--data-dir", three.toString()),
                "--kafka-brokers 1 with --data-dir " + three + ", whose Kafka data was made by --kafka-brokers 3");
        assertRejected(
                concat(jars, "--data-dir", three.toString(), "--kafka-brokers", "5"),
                "whose Kafka data was made by --kafka-brokers 3");
    }

    /** Jar flags naming files that exist, so that the checks after theirs are reached. */
    private static List<String> jars(Path tmp) throws Exception {
        Path jar = Files.writeString(tmp.resolve("some.jar"), "not run");
        return List.of("--ingester-jar", jar.toString(), "--fanout-node-jar", jar.toString());
    }

    private static List<String> concat(List<String> first, String... more) {
        List<String> all = new java.util.ArrayList<>(first);
        all.addAll(List.of(more));
        return all;
    }

    private static void assertRejected(List<String> args, String message) {
        if (!args.contains("--ingester-jar")) {
            // Should the flags pass, the stack must not start: no ingester to start it with.
            args = concat(args, "--ingester-jar", "/no/such/ingester.jar");
        }
        StringWriter out = new StringWriter();
        assertThat(cli(new LocalStackMain(), Map.of(), out).execute(args.toArray(String[]::new)))
                .as(args.toString())
                .isEqualTo(2);
        assertThat(out.toString()).contains(message);
    }

    @Test
    void helpListsEveryFlagWithItsDefault() {
        StringWriter out = new StringWriter();
        assertThat(cli(new LocalStackMain(), Map.of(), out).execute("--help")).isZero();
        assertThat(out.toString().replaceAll("\\s+", " "))
                .contains(
                        "--etcd-port",
                        "--etcd-peer-port",
                        "--kafka-port",
                        "--kafka-controller-port",
                        "--kafka-brokers",
                        "--ingester-port",
                        "--fanout-ports",
                        "--data-dir",
                        "--topic-prefix",
                        "--demo",
                        "--demo-rate",
                        "--start-timeout",
                        "--ingester-jar",
                        "--fanout-node-jar",
                        "Default: 2379",
                        "Default: 8081,8082",
                        "Default: 120s",
                        "WATCHFANOUT_<FLAG_NAME>");
    }

    @Test
    void theReadmeFlagTableEqualsHelp() {
        org.assertj.core.api.Assertions.assertThat(
                        io.watchfanout.testkit.ReadmeFlags.differences(LocalStackMain.commandLine(), "local-stack"))
                .as("README.md's flag table 'local-stack' against --help")
                .isEmpty();
    }
}
