package io.watchfanout.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NetworkCutsTest {
    @Test
    void partRulesMarkThePartsConnectionsOnTheWayOutAndDropBothWaysOnTheWayIn() {
        List<List<String>> rules =
                NetworkCuts.partRules("c-in", "c-out", "watchfanout-chaos-x/node-1", 0x57460002, 9092);
        assertThat(rules)
                .extracting(r -> String.join(" ", r))
                .containsExactly(
                        "-A c-out -m cgroup --path watchfanout-chaos-x/node-1 -p tcp --dport 9092 -j CONNMARK"
                                + " --set-xmark 0x57460002/0xffffffff",
                        "-A c-in -p tcp --dport 9092 -m connmark --mark 0x57460002 -j DROP",
                        "-A c-in -p tcp --sport 9092 -m connmark --mark 0x57460002 -j DROP");
    }

    @Test
    void connectionRulesDropBothDirectionsOfOneConnection() {
        assertThat(NetworkCuts.connectionRules("c-in", 40000, 8080))
                .extracting(r -> String.join(" ", r))
                .containsExactly(
                        "-A c-in -p tcp --sport 40000 --dport 8080 -j DROP",
                        "-A c-in -p tcp --sport 8080 --dport 40000 -j DROP");
    }

    @Test
    void cgroup2RootIsTheMountPointOfTheFirstCgroup2Line() {
        List<String> mounts = List.of(
                "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0",
                "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0",
                "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0");
        assertThat(NetworkCuts.cgroup2Root(mounts)).isEqualTo(Path.of("/sys/fs/cgroup/unified"));
        assertThat(NetworkCuts.cgroup2Root(mounts.subList(0, 2))).isNull();
    }

    /** Needs root and iptables; skipped elsewhere. */
    @Test
    void aCutConnectionCarriesNothingUntilHealedAndCloseRemovesTheChains() throws Exception {
        NetworkCuts cuts;
        List<String> logged = new ArrayList<>();
        try {
            cuts = NetworkCuts.open("t" + ProcessHandle.current().pid() % 10_000, logged::add);
        } catch (NetworkCuts.Unavailable e) {
            assumeThat(e.getMessage()).as("network cuts unavailable here").isNull();
            return;
        }
        try (NetworkCuts c = cuts;
                ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket accepted = server.accept()) {
            accepted.setSoTimeout(300);
            NetworkCuts.Cut cut = c.cutConnection(client.getLocalPort(), server.getLocalPort());
            client.getOutputStream().write("x".getBytes(StandardCharsets.US_ASCII));
            InputStream in = accepted.getInputStream();
            boolean silent;
            try {
                silent = in.read() < 0;
            } catch (SocketTimeoutException e) {
                silent = true; // nothing came through: the cut holds
            }
            assertThat(silent).isTrue();
            assertThat(iptablesRules()).contains("--sport " + client.getLocalPort());
            cut.heal();
            accepted.setSoTimeout(0); // the retransmission comes through once the rules are gone
            assertThat(in.read()).isEqualTo('x');
            assertThat(iptablesRules()).contains(c.chainIn());
        }
        assertThat(iptablesRules()).doesNotContain(cuts.chainIn()).doesNotContain(cuts.chainOut());
        assertThat(logged).isEmpty();
    }

    private static String iptablesRules() throws Exception {
        Process p = new ProcessBuilder("iptables", "-w", "5", "-S")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }
}
