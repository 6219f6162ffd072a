package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

class SmallHelpersTest {

    @Test
    void freePortsAreDistinctBindableAndBelowTheEphemeralRange() throws Exception {
        int[] ports = FreePorts.pick(20);
        assertThat(Arrays.stream(ports).distinct().count()).isEqualTo(20);
        for (int port : ports) {
            assertThat(port).isBetween(15000, 32767);
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            }
        }
        assertThat(FreePorts.pick()).isNotIn(Arrays.stream(ports).boxed().toArray());
    }

    @Test
    void aPortClaimedByAnotherLiveProcessIsNotHandedOutAndADeadOnesClaimIsTakenOver() throws Exception {
        // Claims are files named after the port; numbers above 65535 keep this test off real ports.
        Path live = FreePorts.CLAIMS.resolve("99991");
        Path dead = FreePorts.CLAIMS.resolve("99992");
        Files.createDirectories(FreePorts.CLAIMS);
        try {
            long parent = ProcessHandle.current().parent().orElseThrow().pid();
            Files.writeString(live, Long.toString(parent));
            assertThat(FreePorts.claim(99991)).isFalse();

            Process gone = new ProcessBuilder("true").start();
            gone.waitFor();
            Files.writeString(dead, Long.toString(gone.pid()));
            assertThat(FreePorts.claim(99992)).isTrue();
            assertThat(Files.readString(dead))
                    .isEqualTo(Long.toString(ProcessHandle.current().pid()));
            assertThat(FreePorts.claim(99992)).isFalse();
        } finally {
            Files.deleteIfExists(live);
            Files.deleteIfExists(dead);
        }
    }

    @Test
    void topicPrefixesAreUniqueAndLegal(TestInfo info) {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            assertThat(seen.add(TopicPrefixes.unique("Same Name"))).isTrue();
        }
        assertThat(TopicPrefixes.unique(info))
                .matches("smallhelperstest-topicprefixesareuniqueandlegal-\\d+-[0-9a-z]{4}");
        assertThat(TopicPrefixes.unique("IngesterIT#crash(Recovery)"))
                .matches("ingesterit-crash-recovery-\\d+-[0-9a-z]{4}");
        assertThat(TopicPrefixes.unique("x".repeat(500))).hasSizeLessThan(80).matches("[a-z0-9-]+");
        assertThat(TopicPrefixes.unique("###")).startsWith("test-");
    }

    @Test
    void aRefusedStartShowsTheErrorOfTheLastLaunchNotTheUsage(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("node.log");
        Files.writeString(
                log,
                String.join(
                        "\n",
                        "==== testkit 2026-12-06T00:00:00Z: starting node: java -jar old",
                        "an older launch's error",
                        "Usage: fanout-node [flags]",
                        "==== testkit 2026-12-06T00:01:00Z: starting node: java -jar node.jar",
                        "--cors-allowed-origins: '127.0.0.1:8000' (expected: origins such as https://a.example)",
                        "",
                        "Usage: fanout-node [flags]",
                        "      --bookmark-interval=DURATION",
                        "                  ..."));
        assertThat(StackLauncher.usageError(log))
                .isEqualTo("--cors-allowed-origins: '127.0.0.1:8000' (expected: origins such as https://a.example)");
        Files.writeString(log, "==== testkit start\nException in thread main\n\tat x.y\n");
        assertThat(StackLauncher.usageError(log))
                .as("no usage text: the caller shows the tail")
                .isNull();
        assertThat(StackLauncher.usageError(dir.resolve("missing.log"))).isNull();
    }

    @Test
    void aChildThatRefusesItsFlagsWhileStartingIsAFlagsRefusedException(@TempDir Path dir) {
        JavaProcess child = JavaProcess.builder(RefusesItsFlags.class.getName())
                .name("refuses")
                .logFile(dir.resolve("refuses.log"))
                .start();
        try {
            assertThatThrownBy(() -> StackLauncher.awaitReady(
                            child, "refuses", "http://127.0.0.1:1/readyz", Duration.ofMinutes(2), () -> {}))
                    .isInstanceOf(FlagsRefusedException.class)
                    .hasMessageContaining("exited with code 2 while starting; it refused its flags")
                    .hasMessageContaining("--bookmark-interval: 1 (expected: a duration");
        } finally {
            child.close();
        }
    }

    /** A child's main that refuses its flags as the project's runnables do: one line, the usage, exit 2. */
    static final class RefusesItsFlags {
        public static void main(String[] args) {
            System.err.println("--bookmark-interval: 1 (expected: a duration, e.g. 5s)");
            System.err.println();
            System.err.println("Usage: refuses [flags]");
            System.exit(2);
        }
    }
}
