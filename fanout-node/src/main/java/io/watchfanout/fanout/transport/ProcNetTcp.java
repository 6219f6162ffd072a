package io.watchfanout.fanout.transport;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/**
 * Reads the kernel's table of TCP connections ({@code /proc/net/tcp}, {@code /proc/net/tcp6})
 * and reports the connections of one local port that the kernel is retrying with unacknowledged
 * bytes: state ESTABLISHED, bytes in the send queue ({@code tx_queue > 0}), the retransmission
 * or the window-probe timer running ({@code tr} 1 or 4), and at least one retry since the peer
 * last acknowledged something ({@code retrnsmt} + {@code timeout} > 0: Linux counts RTO
 * retransmissions in {@code icsk_retransmits} and window probes in {@code icsk_probes_out}, and
 * resets both on every acknowledgement that arrives).
 *
 * <p>One pass over the bytes, no regex, no string per line: a line is parsed field by field
 * until it fails a test (most lines of a busy node fail at {@code tx_queue}), and only a
 * reported connection makes objects. A line looks like this (tcp6 has 32 hex digits per
 * address; each 32-bit word is printed as a native-order integer):
 *
 * <pre>
 *   sl  local_address rem_address   st tx_queue rx_queue tr tm-&gt;when retrnsmt   uid  timeout inode
 *    0: 0100007F:1F90 0200C80A:D3A4 01 0000002A:00000000 01:00000031 00000002     0        0 12345 ...
 * </pre>
 *
 * <p>Thread-safety: an instance is used by one thread at a time (it reuses its buffers).
 */
final class ProcNetTcp {
    /** Linux's {@code TCP_ESTABLISHED}. */
    private static final int ESTABLISHED = 1;
    /** {@code tr}: the retransmission timer (also tail loss probe, reordering), the zero-window probe timer. */
    private static final int TIMER_RETRANSMIT = 1;

    private static final int TIMER_PROBE0 = 4;
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    /** A connection the kernel is retrying with unacknowledged bytes. */
    interface Visitor {
        /**
         * @param local the connection's local address
         * @param remote the peer's address
         * @param remotePort the peer's port
         * @param txQueue bytes in the send queue not yet acknowledged (sent or not)
         * @param retries retransmissions plus window probes since the peer last acknowledged anything
         */
        void unacknowledged(InetAddress local, InetAddress remote, int remotePort, long txQueue, long retries);
    }

    private final byte[] buffer = new byte[64 * 1024];
    private final byte[] line = new byte[512];
    private final int[] localWords = new int[4];
    private final int[] remoteWords = new int[4];
    /** Parse cursor into {@link #line}. */
    private int pos;

    private int end;

    /**
     * Reads a whole table (the first line, a header, is skipped) and calls {@code visitor} for
     * each connection of {@code localPort} that the kernel is retrying with unacknowledged bytes.
     *
     * @return the number of connection lines read
     */
    int scan(InputStream in, int localPort, Visitor visitor) throws IOException {
        int len = 0;
        int lines = 0;
        boolean header = true;
        int n;
        while ((n = in.read(buffer)) > 0) {
            for (int i = 0; i < n; i++) {
                byte b = buffer[i];
                if (b != '\n') {
                    if (len < line.length) {
                        line[len++] = b;
                    }
                    continue;
                }
                if (header) {
                    header = false;
                } else {
                    lines++;
                    parseLine(len, localPort, visitor);
                }
                len = 0;
            }
        }
        if (len > 0 && !header) {
            lines++;
            parseLine(len, localPort, visitor);
        }
        return lines;
    }

    /** Parses {@code line[0, len)}; silently skips a line that does not have the expected shape. */
    private void parseLine(int len, int localPort, Visitor visitor) {
        pos = 0;
        end = len;
        // "  12: " (the slot number)
        if (!skipPast((byte) ':')) {
            return;
        }
        skipSpaces();
        int localLength = address(localWords);
        if (localLength < 0 || !expect(':') || hex(4) != localPort) {
            return;
        }
        skipSpaces();
        int remoteLength = address(remoteWords);
        if (remoteLength != localLength || !expect(':')) {
            return;
        }
        long remotePort = hex(4);
        if (remotePort < 0 || !skipSpaces() || hex(2) != ESTABLISHED || !skipSpaces()) {
            return;
        }
        long txQueue = hex(8);
        if (txQueue <= 0 || !expect(':') || hex(8) < 0 || !skipSpaces()) {
            return;
        }
        long timer = hex(2);
        if ((timer != TIMER_RETRANSMIT && timer != TIMER_PROBE0) || !expect(':') || hex(8) < 0 || !skipSpaces()) {
            return;
        }
        long retransmits = hex(8);
        // uid, then "timeout": the window or keepalive probes sent without an answer.
        if (retransmits < 0 || !skipSpaces() || decimal() < 0 || !skipSpaces()) {
            return;
        }
        long probes = decimal();
        if (probes < 0 || retransmits + probes == 0) {
            return;
        }
        InetAddress local = toAddress(localWords, localLength);
        InetAddress remote = toAddress(remoteWords, remoteLength);
        if (local != null && remote != null) {
            visitor.unacknowledged(local, remote, (int) remotePort, txQueue, retransmits + probes);
        }
    }

    /**
     * An address of 8 (IPv4) or 32 (IPv6) hex digits into {@code words}.
     *
     * @return the number of words (1 or 4), or -1
     */
    private int address(int[] words) {
        int start = pos;
        int count = 0;
        while (pos < end && line[pos] != ':') {
            if (count == 4 || pos + 8 > end) {
                return -1;
            }
            long w = hex(8);
            if (w < 0) {
                return -1;
            }
            words[count++] = (int) w;
        }
        int digits = pos - start;
        return digits == 8 || digits == 32 ? count : -1;
    }

    /**
     * The address of words printed as native-order 32-bit integers; an IPv4-mapped IPv6 address
     * becomes an {@link java.net.Inet4Address}, as Java reports the peers of dual-stack sockets.
     */
    private static InetAddress toAddress(int[] words, int count) {
        byte[] bytes = new byte[count * 4];
        for (int i = 0; i < count; i++) {
            int w = LITTLE_ENDIAN ? Integer.reverseBytes(words[i]) : words[i];
            bytes[4 * i] = (byte) (w >>> 24);
            bytes[4 * i + 1] = (byte) (w >>> 16);
            bytes[4 * i + 2] = (byte) (w >>> 8);
            bytes[4 * i + 3] = (byte) w;
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** Exactly {@code digits} hex digits as a number, or -1. */
    private long hex(int digits) {
        if (pos + digits > end) {
            return -1;
        }
        long v = 0;
        for (int i = 0; i < digits; i++) {
            int d = Character.digit(line[pos++], 16);
            if (d < 0) {
                return -1;
            }
            v = (v << 4) | d;
        }
        return v;
    }

    /** One or more decimal digits as a number, or -1. */
    private long decimal() {
        int start = pos;
        long v = 0;
        while (pos < end && line[pos] >= '0' && line[pos] <= '9' && pos - start < 18) {
            v = v * 10 + (line[pos++] - '0');
        }
        return pos > start ? v : -1;
    }

    private boolean expect(char c) {
        if (pos < end && line[pos] == c) {
            pos++;
            return true;
        }
        return false;
    }

    /** Skips spaces; true if at least one was skipped. */
    private boolean skipSpaces() {
        int start = pos;
        while (pos < end && line[pos] == ' ') {
            pos++;
        }
        return pos > start;
    }

    private boolean skipPast(byte c) {
        while (pos < end) {
            if (line[pos++] == c) {
                return true;
            }
        }
        return false;
    }
}
