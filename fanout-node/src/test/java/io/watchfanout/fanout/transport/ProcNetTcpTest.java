package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Inet4Address;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kernel's TCP tables are read line by line, and only connections of the port whose bytes
 * the kernel retries without an acknowledgement are reported. The lines are as a little-endian
 * Linux prints them (addresses are native-order words).
 */
class ProcNetTcpTest {
    private static final String TCP4_HEADER =
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when " + "retrnsmt   uid  timeout inode\n";
    private static final String TCP6_HEADER = "  sl  local_address                         remote_address"
            + "                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    /** 10.200.0.1:8080 to 10.200.0.2:54180 (plus "rest" for the columns after the probes). */
    private static final String V4 = "0100C80A:1F90 0200C80A:D3A4";

    private static final String REST = " 12345 2 0000000000000000 200 0 0 10 -1";

    private final List<String> reported = new ArrayList<>();
    private final ProcNetTcp.Visitor visitor = (local, remote, remotePort, txQueue, retries) ->
            reported.add(local.getHostAddress() + " " + remote.getHostAddress() + ":" + remotePort + " tx=" + txQueue
                    + " retries=" + retries + (remote instanceof Inet4Address ? " v4" : " v6"));

    @BeforeEach
    void littleEndian() {
        assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "sample lines are little-endian");
    }

    @Test
    void reportsEstablishedConnectionsOfThePortWhoseBytesAreRetriedWithoutAnAcknowledgement() throws IOException {
        String table = TCP4_HEADER
                // Retransmission timer, two retransmissions: reported.
                + "   0: " + V4 + " 01 0000002A:00000000 01:00000031 00000002     0        0" + REST + "\n"
                // Window probe timer, three probes unanswered: reported.
                + "   1: 0100C80A:1F90 0300C80A:D3A5 01 00000100:00000000 04:000000C8 00000000     0        3" + REST
                + "\n"
                // Another local port.
                + "   2: 0100C80A:1F91 0200C80A:D3A4 01 0000002A:00000000 01:00000031 00000002     0        0" + REST
                + "\n"
                // Listening, closing (FIN_WAIT1).
                + "   3: 0100C80A:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0" + REST
                + "\n"
                + "   4: " + V4 + " 04 0000002A:00000000 01:00000031 00000002     0        0" + REST + "\n"
                // Nothing unacknowledged; keepalive probes; retransmission timer armed but nothing retried yet.
                + "   5: " + V4 + " 01 00000000:00000000 01:00000031 00000002     0        0" + REST + "\n"
                + "   6: " + V4 + " 01 0000002A:00000000 02:00000031 00000000     0        2" + REST + "\n"
                + "   7: " + V4 + " 01 0000002A:00000000 01:00000031 00000000     0        0" + REST + "\n"
                // Malformed: cut short, not hex.
                + "   8: 0100C80A:1F90 0200C80A:D3A4 01 0000002A:000\n"
                + "   9: 0100C80A:1F90 0200C80A:D3A4 01 0000002Z:00000000 01:00000031 00000002     0        0" + REST
                + "\n"
                + "\n";
        assertThat(new ProcNetTcp().scan(in(table), 8080, visitor)).isEqualTo(11);
        assertThat(reported)
                .containsExactly(
                        "10.200.0.1 10.200.0.2:54180 tx=42 retries=2 v4",
                        "10.200.0.1 10.200.0.3:54181 tx=256 retries=3 v4");
    }

    @Test
    void readsIpv6AndIpv4MappedAddressesOfTheIpv6Table() throws IOException {
        String table = TCP6_HEADER
                + "   0: 0000000000000000FFFF00000100C80A:1F90 0000000000000000FFFF00000300C80A:D3A5 01 "
                + "00000030:00000000 01:00000031 00000001     0        0" + REST + "\n"
                + "   1: B80D0120000000000000000001000000:1F90 B80D0120000000000000000002000000:C350 01 "
                + "00000030:00000000 01:00000031 00000005     0        0" + REST;
        ProcNetTcp parser = new ProcNetTcp();
        assertThat(parser.scan(in(table), 8080, visitor)).isEqualTo(2);
        assertThat(reported)
                .containsExactly(
                        "10.200.0.1 10.200.0.3:54181 tx=48 retries=1 v4",
                        "2001:db8:0:0:0:0:0:1 2001:db8:0:0:0:0:0:2:50000 tx=48 retries=5 v6");

        // The parser is reused, and lines may be split across reads anywhere.
        reported.clear();
        assertThat(parser.scan(new Trickle(in(table)), 8080, visitor)).isEqualTo(2);
        assertThat(reported).hasSize(2);
    }

    @Test
    void aTableOfThisMachineParsesWithoutReportingIdleConnections() throws IOException {
        java.nio.file.Path tcp = java.nio.file.Path.of(UnacknowledgedSweeper.TCP4);
        assumeTrue(java.nio.file.Files.isReadable(tcp), "no " + tcp);
        try (InputStream in = java.nio.file.Files.newInputStream(tcp)) {
            assertThat(new ProcNetTcp().scan(in, 0, visitor)).isGreaterThanOrEqualTo(0);
        }
        assertThat(reported).as("nothing is established on port 0").isEmpty();
    }

    private static InputStream in(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.US_ASCII));
    }

    /** Returns at most 7 bytes per read. */
    private static final class Trickle extends FilterInputStream {
        Trickle(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return super.read(b, off, Math.min(len, 7));
        }
    }
}
