package io.watchfanout.fanout.transport;

import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frees watch streams whose client vanished while the node had a few bytes in flight to it: a
 * quiet watch with bookmarks sends a bookmark every few seconds, so its connection always has
 * unacknowledged bytes (TCP keepalive probes only an idle connection) and never fills its send
 * buffer (the write timeout needs a full one). Left alone, the kernel gives up only after
 * {@code net.ipv4.tcp_retries2} retransmissions, about 15 minutes.
 *
 * <p>One timer for the node: every {@link #intervalFor sweep interval} it reads the kernel's
 * view of the node's TCP connections ({@link ProcNetTcp}) and, for each connection of the HTTP
 * port that the kernel keeps retrying (unacknowledged bytes, retransmissions or window probes
 * unanswered), notes since when it has been seen so. A connection seen so continuously for
 * {@code --write-timeout} has its watch stream closed ({@link WatchStream#closeUnacknowledged}),
 * the semantics of Linux's {@code TCP_USER_TIMEOUT}: data unacknowledged for longer than the
 * timeout. "Continuously": a sample whose retry count or queued bytes are below the previous
 * sample's means the peer acknowledged something in between, and restarts the clock; a sample
 * without the connection (every acknowledgement resets the kernel's retry counts) drops it. A
 * live client, however slow, acknowledges within round trips, so it is never closed; a reader
 * that stopped reading answers the kernel's window probes.
 *
 * <p>Why not {@code TCP_USER_TIMEOUT} itself: Java 17 has no such socket option
 * ({@code jdk.net.ExtendedSocketOptions} has keepalive timings, not it), and setting it on the
 * accepted sockets would need the file descriptor ({@code sun.nio.ch}, which
 * {@code java.base} does not open without {@code --add-opens}) and a native {@code setsockopt}
 * (no JNI or foreign-function access in this project). Reading {@code /proc} needs neither.
 *
 * <p>Where {@code /proc/self/net/tcp} cannot be read (not Linux) this is logged once and the
 * sweeper stays off; such connections are then left to the kernel.
 *
 * <p>Thread-safety: {@link #register} and {@link #unregister} from any thread (the streams' IO
 * threads); the sweep runs on the sweeper's own thread and closes streams on theirs.
 */
final class UnacknowledgedSweeper {
    private static final Logger LOG = LoggerFactory.getLogger(UnacknowledgedSweeper.class);
    static final String TCP4 = "/proc/self/net/tcp";
    static final String TCP6 = "/proc/self/net/tcp6";
    private static final Duration MIN_INTERVAL = Duration.ofMillis(500);
    private static final Duration MAX_INTERVAL = Duration.ofSeconds(5);

    /** A TCP connection of the HTTP port, as both the kernel's table and the exchange tell it. */
    record ConnectionId(InetAddress local, InetAddress remote, int remotePort) {
        /** The id of an accepted connection, or null if its addresses are not IP socket addresses. */
        static ConnectionId of(SocketAddress local, SocketAddress peer) {
            if (local instanceof InetSocketAddress l
                    && peer instanceof InetSocketAddress p
                    && l.getAddress() != null
                    && p.getAddress() != null) {
                return new ConnectionId(l.getAddress(), p.getAddress(), p.getPort());
            }
            return null;
        }
    }

    /** A connection the kernel retries: since when it is seen so, and its last sample. */
    private record Suspect(long sinceNanos, long txQueue, long retries) {}

    private final String nodeId;
    private final long timeoutNanos;
    private final Duration interval;
    private final String tcp4;
    private final String tcp6;
    private final Map<ConnectionId, WatchStream> streams = new ConcurrentHashMap<>();
    private final ProcNetTcp parser = new ProcNetTcp();
    /** Sweeper thread only. */
    private Map<ConnectionId, Suspect> suspects = new HashMap<>();

    private ScheduledExecutorService timer;
    private int port;
    private boolean tcp6Missing;

    /**
     * @param timeout how long a connection may keep bytes unacknowledged (the write timeout)
     * @param nodeId the node's id, for log lines
     */
    UnacknowledgedSweeper(Duration timeout, String nodeId) {
        this(timeout, nodeId, TCP4, TCP6);
    }

    /** As above, reading the tables at the given paths (tests). */
    UnacknowledgedSweeper(Duration timeout, String nodeId, String tcp4, String tcp6) {
        this.nodeId = nodeId;
        this.timeoutNanos = timeout.toNanos();
        this.interval = intervalFor(timeout);
        this.tcp4 = tcp4;
        this.tcp6 = tcp6;
    }

    /**
     * How often the tables are read for a timeout: a quarter of it, within 0.5..5 s. A connection
     * is closed within timeout + one interval of the first retry the sweeper sees.
     */
    static Duration intervalFor(Duration timeout) {
        Duration quarter = timeout.dividedBy(4);
        return quarter.compareTo(MIN_INTERVAL) < 0
                ? MIN_INTERVAL
                : quarter.compareTo(MAX_INTERVAL) > 0 ? MAX_INTERVAL : quarter;
    }

    Duration interval() {
        return interval;
    }

    /**
     * Starts sweeping the connections of {@code port}, unless the kernel's table cannot be read
     * here (logged once).
     *
     * @return true if started
     */
    synchronized boolean start(int port) {
        this.port = port;
        try (InputStream in = new FileInputStream(tcp4)) {
            in.read();
        } catch (IOException | SecurityException e) {
            LOG.warn(
                    "[node {}] cannot read {} ({}): watch streams whose client vanished while bytes were in flight "
                            + "(a quiet watch with bookmarks) are left to the kernel's retransmission limit "
                            + "(net.ipv4.tcp_retries2)",
                    nodeId,
                    tcp4,
                    e.toString());
            return false;
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "watchfanout-unacked-sweeper-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(
                this::sweepSafely, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return true;
    }

    /** Stops the timer. */
    synchronized void stop() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }

    /**
     * A stream whose connection the sweeper may close.
     *
     * @return its id, for {@link #unregister}; null if its connection has no IP addresses
     */
    ConnectionId register(WatchStream stream, SocketAddress local, SocketAddress peer) {
        ConnectionId id = ConnectionId.of(local, peer);
        if (id != null) {
            streams.put(id, stream);
        }
        return id;
    }

    void unregister(ConnectionId id, WatchStream stream) {
        if (id != null) {
            streams.remove(id, stream);
        }
    }

    /** Streams registered (tests). */
    int registered() {
        return streams.size();
    }

    private void sweepSafely() {
        try {
            sweep(System.nanoTime());
        } catch (IOException | RuntimeException e) {
            // A read of /proc failing after the first succeeded is not expected; try again next time.
            LOG.warn("[node {}] sweep of {} failed: {}", nodeId, tcp4, e.toString());
        }
    }

    /** One sweep at {@code now} (System.nanoTime()): reads both tables, closes what timed out. */
    void sweep(long now) throws IOException {
        if (streams.isEmpty()) {
            suspects.clear();
            return;
        }
        Map<ConnectionId, Suspect> previous = suspects;
        Map<ConnectionId, Suspect> current = new HashMap<>();
        ProcNetTcp.Visitor visitor = (local, remote, remotePort, txQueue, retries) -> {
            ConnectionId id = new ConnectionId(local, remote, remotePort);
            Suspect before = previous.get(id);
            long since = before != null && retries >= before.retries() && txQueue >= before.txQueue()
                    ? before.sinceNanos()
                    : now;
            current.put(id, new Suspect(since, txQueue, retries));
        };
        long started = System.nanoTime();
        int lines;
        try (InputStream in = new FileInputStream(tcp4)) {
            lines = parser.scan(in, port, visitor);
        }
        if (!tcp6Missing) {
            try (InputStream in = new FileInputStream(tcp6)) {
                lines += parser.scan(in, port, visitor);
            } catch (FileNotFoundException e) {
                // A kernel without IPv6: only the IPv4 table exists.
                tcp6Missing = true;
            }
        }
        suspects = current;
        if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "[node {}] swept {} connections in {} us: {} with unacknowledged bytes retried",
                    nodeId,
                    lines,
                    TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - started),
                    current.size());
        }
        for (Map.Entry<ConnectionId, Suspect> e : current.entrySet()) {
            long unacknowledgedFor = now - e.getValue().sinceNanos();
            if (unacknowledgedFor < timeoutNanos) {
                continue;
            }
            WatchStream stream = streams.get(e.getKey());
            if (stream != null) {
                stream.closeUnacknowledged(unacknowledgedFor, e.getValue().txQueue(), interval.toNanos());
            }
        }
    }
}
