package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

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
}
