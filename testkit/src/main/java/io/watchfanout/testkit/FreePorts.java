package io.watchfanout.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks TCP ports on the loopback interface (127.0.0.1) that are free at the time of the call.
 *
 * <p>Ports are drawn at random from a range <em>below</em> the kernel's ephemeral port range
 * ({@code /proc/sys/net/ipv4/ip_local_port_range}, 32768–60999 on Debian), so that no outgoing
 * connection can later occupy a port that a restarted etcd or Kafka needs to bind again. Each
 * candidate is checked by binding it; a port is never handed out twice by the same JVM, nor by
 * two JVMs at once: a JVM claims each port it hands out with a file named after the port in
 * {@code watchfanout-ports} under the temporary directory, holding its process id, deleted when
 * it exits. A claim whose process is gone (killed) is taken over. The bind check alone left a
 * window in which two JVMs (Maven's two test forks) handed out the same port, one as a broker's,
 * one as another broker's controller port, and the second to bind failed. A process that claims
 * nothing may still take a port between the check and the server's own bind.
 *
 * <p>Thread-safe: all methods may be called from any thread.
 */
public final class FreePorts {
    /** Lowest port ever returned. */
    private static final int LOWEST_PORT = 15000;
    /** Ports handed out by this JVM; guarded by the class lock. */
    private static final Set<Integer> HANDED_OUT = new HashSet<>();
    /** The directory of the claims of every JVM on the machine. */
    static final Path CLAIMS = Path.of(System.getProperty("java.io.tmpdir"), "watchfanout-ports");

    private static final long SELF = ProcessHandle.current().pid();

    private FreePorts() {}

    /**
     * Returns one free loopback TCP port.
     *
     * @return a port number in [15000, start of the ephemeral range)
     * @throws IllegalStateException if no free port is found after many attempts
     */
    public static int pick() {
        return pick(1)[0];
    }

    /**
     * Returns {@code count} distinct free loopback TCP ports.
     *
     * @param count how many ports, at least 1
     * @return the ports, all distinct, none returned before by this JVM
     * @throws IllegalArgumentException if {@code count < 1}
     * @throws IllegalStateException if not enough free ports are found after many attempts
     */
    public static synchronized int[] pick(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count: " + count + " (expected: >= 1)");
        }
        int highest = ephemeralRangeStart() - 1;
        int[] ports = new int[count];
        int found = 0;
        for (int attempt = 0; attempt < 10_000 && found < count; attempt++) {
            int candidate = ThreadLocalRandom.current().nextInt(LOWEST_PORT, highest + 1);
            if (HANDED_OUT.contains(candidate) || !claim(candidate)) {
                continue;
            }
            if (isFree(candidate)) {
                HANDED_OUT.add(candidate);
                ports[found++] = candidate;
            } else {
                release(candidate);
            }
        }
        if (found < count) {
            throw new IllegalStateException("found only " + found + " free loopback ports in [" + LOWEST_PORT + ", "
                    + highest + "] (expected: " + count + ")");
        }
        return ports;
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Claims {@code port} for this JVM against the other JVMs on the machine: true if no live process
     * holds a claim on it (a dead one's is taken over), or if claims cannot be written at all (then
     * the bind check is all there is).
     */
    static boolean claim(int port) {
        Path claim = CLAIMS.resolve(Integer.toString(port));
        try {
            Files.createDirectories(CLAIMS);
            for (int attempt = 0; attempt < 2; attempt++) {
                try {
                    Files.writeString(
                            claim, Long.toString(SELF), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                    claim.toFile().deleteOnExit();
                    return true;
                } catch (FileAlreadyExistsException e) {
                    if (!ownerIsGone(claim)) {
                        return false;
                    }
                    Files.deleteIfExists(claim);
                }
            }
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    private static boolean ownerIsGone(Path claim) throws IOException {
        long owner;
        try {
            owner = Long.parseLong(Files.readString(claim).trim());
        } catch (NoSuchFileException e) {
            return true;
        } catch (NumberFormatException e) {
            // Being written by its owner this instant, or garbage: not taken over.
            return false;
        }
        return owner != SELF && ProcessHandle.of(owner).map(p -> !p.isAlive()).orElse(true);
    }

    private static void release(int port) {
        try {
            Files.deleteIfExists(CLAIMS.resolve(Integer.toString(port)));
        } catch (IOException e) {
            // left for the next JVM to take over once this one is gone
        }
    }

    /** The first port of the kernel's ephemeral range, 32768 if it cannot be read. */
    private static int ephemeralRangeStart() {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        try {
            if (Files.isReadable(range)) {
                String[] parts = Files.readString(range).trim().split("\\s+");
                int start = Integer.parseInt(parts[0]);
                if (start > LOWEST_PORT + 1000) {
                    return start;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + range, e);
        } catch (RuntimeException e) {
            // unparseable: fall back to the Linux default below
        }
        return 32768;
    }
}
