package io.watchfanout.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The physical ceiling of watch delivery on this box: a minimal NIO HTTP server that answers
 * every watch request with the node's response headers and then writes one pre-encoded chunk of
 * {@code framesPerWrite} identical frames whenever the socket is writable — no cache, no
 * dispatch, no encode, one gathered write per chunk (the node's own write path at full backlog).
 * Run in the benchmark JVM on {@code threads} selector threads (the node uses one IO thread per
 * core).
 */
final class LimitWriter implements AutoCloseable {
    private static final byte[] HEADERS = ("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\n"
                    + "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);

    private final ServerSocketChannel server;
    private final ByteBuffer chunk;
    private final List<Thread> threads = new ArrayList<>();
    private final List<Selector> selectors = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    /** Accepted channels waiting for their selector thread to register them: {channel, selector}; guarded by this. */
    private final List<Object[]> pendingAdd = new ArrayList<>();

    private volatile boolean running = true;

    /**
     * @param frame one frame's bytes (a JSON line)
     * @param framesPerWrite frames per chunk, one chunk per write
     */
    LimitWriter(byte[] frame, int framesPerWrite, int threadCount) throws IOException {
        byte[] size = (Integer.toHexString(frame.length * framesPerWrite) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        ByteBuffer c = ByteBuffer.allocateDirect(size.length + frame.length * framesPerWrite + 2);
        c.put(size);
        for (int i = 0; i < framesPerWrite; i++) {
            c.put(frame);
        }
        c.put((byte) '\r').put((byte) '\n').flip();
        chunk = c.asReadOnlyBuffer();
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0), 4096);
        for (int i = 0; i < threadCount; i++) {
            Selector s = Selector.open();
            selectors.add(s);
            Thread t = new Thread(() -> loop(s), "limit-writer-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        Thread acceptor = new Thread(this::accept, "limit-accept");
        acceptor.setDaemon(true);
        threads.add(acceptor);
        threads.forEach(Thread::start);
    }

    int port() {
        return server.socket().getLocalPort();
    }

    /** Per connection: the headers, then the current chunk's remainder. */
    private static final class Conn {
        ByteBuffer headers = ByteBuffer.wrap(HEADERS);
        ByteBuffer out;
        final ByteBuffer[] pair = new ByteBuffer[2];
    }

    private void accept() {
        while (running) {
            try {
                SocketChannel ch = server.accept();
                ch.configureBlocking(false);
                Selector s = selectors.get(next.getAndIncrement() % selectors.size());
                synchronized (this) {
                    pendingAdd.add(new Object[] {ch, s});
                }
                s.wakeup();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void loop(Selector selector) {
        try {
            while (running) {
                synchronized (this) {
                    for (Iterator<Object[]> it = pendingAdd.iterator(); it.hasNext(); ) {
                        Object[] p = it.next();
                        if (p[1] == selector) {
                            ((SocketChannel) p[0]).register(selector, SelectionKey.OP_WRITE, new Conn());
                            it.remove();
                        }
                    }
                }
                selector.select(50);
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey k = it.next();
                    it.remove();
                    Conn c = (Conn) k.attachment();
                    try {
                        if (k.isValid() && k.isWritable()) {
                            write((SocketChannel) k.channel(), c);
                        }
                    } catch (IOException e) {
                        k.cancel();
                        k.channel().close();
                    }
                }
            }
        } catch (IOException e) {
            // closing
        } finally {
            for (SelectionKey k : selector.keys()) {
                try {
                    k.channel().close();
                } catch (IOException ignored) {
                    // closing
                }
            }
        }
    }

    private void write(SocketChannel ch, Conn c) throws IOException {
        // Request bytes are ignored: every connection is a watch.
        while (true) {
            if (c.out == null || !c.out.hasRemaining()) {
                c.out = chunk.duplicate();
            }
            long n;
            if (c.headers != null) {
                c.pair[0] = c.headers;
                c.pair[1] = c.out;
                n = ch.write(c.pair);
                if (!c.headers.hasRemaining()) {
                    c.headers = null;
                }
            } else {
                n = ch.write(c.out);
            }
            if (n == 0 || c.out.hasRemaining()) {
                return;
            }
        }
    }

    @Override
    public void close() throws IOException {
        running = false;
        server.close();
        selectors.forEach(Selector::wakeup);
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Selector s : selectors) {
            s.close();
        }
    }
}
