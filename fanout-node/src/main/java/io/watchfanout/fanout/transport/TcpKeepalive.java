package io.watchfanout.fanout.transport;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import jdk.net.ExtendedSocketOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.StreamConnection;

/**
 * TCP keepalive timings of the connections the HTTP listener accepts: the first probe after
 * {@code idle} without any packet from the client, then one every {@code interval}; after
 * {@code count} unanswered probes the kernel reports the connection broken, and the watch
 * stream on it ends (its read side sees the error).
 *
 * <p>Why: a client that vanishes without a FIN (its network namespace deleted, its host
 * powered off) otherwise holds its watcher until the kernel's defaults notice, two hours of
 * idle by {@code net.ipv4.tcp_keepalive_time} on a watch that sends nothing. Keepalive probes
 * only run while the node has no unacknowledged bytes on the connection; a stream that keeps
 * sending to a vanished client is freed by the write timeout (or, for a trickle that never
 * fills its socket, by the {@link UnacknowledgedSweeper}).
 *
 * <p>{@code SO_KEEPALIVE} is switched on by the listener's XNIO option; the timings are
 * {@code jdk.net.ExtendedSocketOptions} on the accepted {@link SocketChannel}, which XNIO does
 * not expose: it is reached once, by reflection, through
 * {@code org.xnio.nio.NioSocketStreamConnection.getChannel()}. Where that or the options are
 * unavailable (another XNIO provider, an OS without them) a warning is logged once and the
 * connections keep {@code SO_KEEPALIVE} with the system's timings.
 *
 * @param idle time without a packet from the client before the first probe, whole seconds in
 *     1..32767 (Linux {@code TCP_KEEPIDLE})
 * @param interval time between probes, whole seconds in 1..32767 ({@code TCP_KEEPINTVL})
 * @param count unanswered probes before the connection is broken, 1..127 ({@code TCP_KEEPCNT})
 */
public record TcpKeepalive(Duration idle, Duration interval, int count) {
    private static final Logger LOG = LoggerFactory.getLogger(TcpKeepalive.class);
    /** Linux's bounds of TCP_KEEPIDLE / TCP_KEEPINTVL (seconds) and TCP_KEEPCNT. */
    static final int MAX_SECONDS = 32767;

    static final int MAX_COUNT = 127;

    /**
     * Validates the fields.
     *
     * @throws IllegalArgumentException naming the field, its value and what was expected
     */
    public TcpKeepalive {
        checkSeconds("idle", idle);
        checkSeconds("interval", interval);
        if (count < 1 || count > MAX_COUNT) {
            throw new IllegalArgumentException("count: " + count + " (expected: 1.." + MAX_COUNT + ")");
        }
    }

    private static void checkSeconds(String name, Duration d) {
        if (!isWholeSeconds(d)) {
            throw new IllegalArgumentException(
                    name + ": " + d + " (expected: whole seconds, 1s.." + MAX_SECONDS + "s)");
        }
    }

    /** True if {@code d} is a whole number of seconds the kernel accepts as a keepalive time (1..32767). */
    public static boolean isWholeSeconds(Duration d) {
        return d.getNano() == 0 && d.getSeconds() >= 1 && d.getSeconds() <= MAX_SECONDS;
    }

    /** How long a vanished client of an otherwise idle connection is held at most: idle + count x interval. */
    public Duration detectionTime() {
        return idle.plus(interval.multipliedBy(count));
    }

    private static final Method CHANNEL = openChannelAccessor();
    /** Set once the first failure is logged, so a node with many connections logs it once. */
    private static volatile boolean warned;

    private static Method openChannelAccessor() {
        try {
            Method m = Class.forName("org.xnio.nio.NioSocketStreamConnection").getDeclaredMethod("getChannel");
            m.setAccessible(true);
            return m;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LoggerFactory.getLogger(TcpKeepalive.class)
                    .warn(
                            "cannot reach XNIO's socket channels ({}); TCP keepalive "
                                    + "uses the system's timings (net.ipv4.tcp_keepalive_*)",
                            e.toString());
            return null;
        }
    }

    /**
     * Sets the timings on an accepted connection (its IO thread, before the request is read).
     * Never throws: a connection whose options cannot be set keeps the system's timings.
     *
     * @return true if all three timings were set
     */
    boolean applyTo(StreamConnection connection) {
        if (CHANNEL == null || !CHANNEL.getDeclaringClass().isInstance(connection)) {
            warnOnce("accepted connections are " + connection.getClass().getName() + ", not XNIO's NIO sockets");
            return false;
        }
        try {
            SocketChannel channel = (SocketChannel) CHANNEL.invoke(connection);
            channel.setOption(ExtendedSocketOptions.TCP_KEEPIDLE, (int) idle.getSeconds());
            channel.setOption(ExtendedSocketOptions.TCP_KEEPINTERVAL, (int) interval.getSeconds());
            channel.setOption(ExtendedSocketOptions.TCP_KEEPCOUNT, count);
            return true;
        } catch (UnsupportedOperationException e) {
            warnOnce("this platform has no per-socket keepalive timings: " + e.getMessage());
            return false;
        } catch (IOException e) {
            // The client is already gone (reset before we got here); the stream will notice.
            LOG.debug("keepalive timings not set on {}: {}", connection.getPeerAddress(), e.toString());
            return false;
        } catch (ReflectiveOperationException | RuntimeException e) {
            warnOnce(e.toString());
            return false;
        }
    }

    private static void warnOnce(String why) {
        if (!warned) {
            warned = true;
            LOG.warn(
                    "TCP keepalive timings are not set ({}); connections use SO_KEEPALIVE with the system's "
                            + "timings (net.ipv4.tcp_keepalive_*)",
                    why);
        }
    }
}
