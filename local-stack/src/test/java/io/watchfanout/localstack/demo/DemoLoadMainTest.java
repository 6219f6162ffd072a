package io.watchfanout.localstack.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.EnvironmentDefaults;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DemoLoadMainTest {
    private static int run(StringWriter out, String... args) {
        CommandLine cl = new CommandLine(new DemoLoadMain()).setDefaultValueProvider(new EnvironmentDefaults(Map.of()));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(out, true));
        return cl.execute(args);
    }

    @Test
    void badFlagsExitWithStatus2() {
        StringWriter missing = new StringWriter();
        assertThat(run(missing)).isEqualTo(2);
        assertThat(missing.toString()).contains("--etcd-endpoints");
        StringWriter rate = new StringWriter();
        assertThat(run(rate, "--etcd-endpoints", "http://127.0.0.1:1", "--demo-rate", "0"))
                .isEqualTo(2);
        assertThat(rate.toString()).contains("--demo-rate: 0 (expected: 1..10000 writes per second)");
        StringWriter endpoint = new StringWriter();
        assertThat(run(endpoint, "--etcd-endpoints", "http://127.0.0.1", "--demo-rate", "5"))
                .isEqualTo(2);
        assertThat(endpoint.toString())
                .contains("--etcd-endpoints")
                .contains("'http://127.0.0.1' is not an etcd endpoint")
                .doesNotContain("Exception");
    }

    @Test
    void helpNamesTheFlagsOfDockerCompose() {
        StringWriter out = new StringWriter();
        assertThat(run(out, "--help")).isZero();
        assertThat(out.toString()).contains("--etcd-endpoints=URLS", "--demo-rate=N", "Default: 20");
    }
}
