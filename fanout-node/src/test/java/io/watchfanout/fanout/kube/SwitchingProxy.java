package io.watchfanout.fanout.kube;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TCP proxy in front of fan-out nodes, as a Service is in front of them: each new connection
 * goes to the node chosen last ({@link #switchTo}); a connection whose node dies is closed on the
 * client's side too, and a connection to a node that does not answer is closed at once. It notes
 * the target of every request the client sends (the clients here send only GETs, without
 * bodies), so that a test can count lists and watches.
 */
final class SwitchingProxy implements AutoCloseable {
    private static final Pattern WATCH = Pattern.compile("[?&]watch=(?!false|0)");
    private static final Pattern REQUEST = Pattern.compile("GET (\\S+) HTTP/1\\.1\r\n");

    private final ServerSocket server;
    private volatile int backendPort;
    private final List<String> targets = new CopyOnWriteArrayList<>();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();

    SwitchingProxy(int backendPort) throws IOException {
        this.backendPort = backendPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** New connections go to the node on {@code port}; open ones stay where they are. */
    void switchTo(int port) {
        backendPort = port;
    }

    /** The request targets seen, in order. */
    List<String> targets() {
        return targets;
    }

    /** The targets of lists: requests without {@code watch}, or with {@code watch=false} (client-java's). */
    List<String> lists() {
        return targets.stream().filter(t -> !WATCH.matcher(t).find()).toList();
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            Socket backend = new Socket();
            try {
                backend.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), backendPort), 2000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(backend);
                continue;
            }
            open.add(client);
            open.add(backend);
            pump(client, backend, true);
            pump(backend, client, false);
        }
    }

    private void pump(Socket from, Socket to, boolean requests) {
        Thread t = new Thread(
                () -> {
                    StringBuilder head = new StringBuilder();
                    byte[] buf = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream()) {
                        OutputStream out = to.getOutputStream();
                        int n;
                        while ((n = in.read(buf)) > 0) {
                            if (requests) {
                                head.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
                                Matcher m = REQUEST.matcher(head);
                                int end = 0;
                                while (m.find()) {
                                    targets.add(m.group(1));
                                    end = m.end();
                                }
                                head.delete(0, end);
                            }
                            out.write(buf, 0, n);
                            out.flush();
                        }
                    } catch (IOException e) {
                        // one side closed or died: close both below
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void closeQuietly(Socket s) {
        open.remove(s);
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : open) {
            closeQuietly(s);
        }
    }
}
