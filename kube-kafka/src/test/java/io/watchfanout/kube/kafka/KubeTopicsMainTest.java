package io.watchfanout.kube.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.kube.kafka.streams.KubeTopicsMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The application's command line: usage, and the exit code and message of bad flags and addresses (no broker). */
class KubeTopicsMainTest {

    /** Exit code, standard output and standard error of {@code kube-topics args}. */
    private record Run(int code, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = KubeTopicsMain.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void helpPrintsUsageWithEveryFlagAndItsDefault() {
        Run r = run("--help");
        assertThat(r.code()).isZero();
        assertThat(r.out())
                .startsWith("Usage: kube-topics ")
                .contains(
                        "--kafka-bootstrap",
                        "--topic-prefix",
                        "--[no-]publish-secrets",
                        "--include",
                        "--exclude",
                        "--http-port",
                        "Default: 8095",
                        "--http-host",
                        "Default: 0.0.0.0",
                        "WATCHFANOUT_KAFKA_BOOTSTRAP");
    }

    @Test
    void anUnknownFlagExitsTwoWithUsage() {
        Run r = run("--kafka-bootstrap", "127.0.0.1:9092", "--no-such-flag");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("Unknown option: '--no-such-flag'").contains("Usage: kube-topics ");
    }

    @Test
    void aMissingOrOutOfRangeValueExitsTwoNamingTheFlag() {
        Run missing = run();
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).contains("--kafka-bootstrap").contains("Usage: kube-topics ");

        Run range = run("--kafka-bootstrap", "127.0.0.1:9092", "--partitions", "0");
        assertThat(range.code()).isEqualTo(2);
        assertThat(range.err()).contains("--partitions: 0 (expected: >= 1)");

        Run prefix = run("--kafka-bootstrap", "127.0.0.1:9092", "--etcd-prefix", "registry");
        assertThat(prefix.code()).isEqualTo(2);
        assertThat(prefix.err()).contains("--etcd-prefix");
    }

    @Test
    void anAddressThatCannotBeBoundExitsOneNamingTheFlags() {
        // 192.0.2.1 (TEST-NET-1) is no address of this machine: the bind fails before anything starts.
        Run r = run("--kafka-bootstrap", "127.0.0.1:9092", "--http-host", "192.0.2.1", "--http-port", "0");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("kube-topics: --http-host/--http-port: ");
    }
}
