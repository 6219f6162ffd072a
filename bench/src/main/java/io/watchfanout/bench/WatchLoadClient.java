package io.watchfanout.bench;

import io.watchfanout.schema.v1.WatchEvent;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import org.HdrHistogram.Recorder;

/**
 * A non-blocking HTTP/1.1 watch client that holds many concurrent watch streams from one JVM:
 * a few selector threads, one small state machine per connection, no thread or per-frame
 * object per stream. It parses the status line and headers, {@code Transfer-Encoding: chunked}
 * (the node and the limit writer send it, with {@code Connection: close}), and the frames inside:
 * JSON lines ({@code application/json}), varint-delimited protobuf ({@code application/x-protobuf})
 * or the Kubernetes API's protobuf watch stream (each frame after a 4-byte big-endian length).
 *
 * <p>Every frame is counted. On sampled connections (every {@code sampleEvery}-th) each frame
 * is also decoded far enough to read the load generator's timestamp ({@link LatencyStamp}) and
 * its put→frame latency is recorded, in microseconds, so that the client's own CPU stays small
 * next to the server's on a 2-core box.
 *
 * <p>Thread-safety: the counters and recorder are thread-safe; each connection belongs to one
 * selector thread.
 *
 * <p>Not the testkit's {@code WatchClient}, which the tests use: that one gives each stream a
 * thread and keeps every decoded frame, to compare with etcd and to resume; this one must hold
 * thousands of streams at once and keep up with their frames, so it counts frames on a few NIO
 * threads and decodes only sampled ones.
 */
final class WatchLoadClient implements AutoCloseable {
    /** Frame encodings the client parses. */
    enum Format {
        JSON("application/json"),
        PROTOBUF("application/x-protobuf"),
        /** client-go's protobuf watch: frames after a 4-byte length; only counted, never sampled. */
        KUBE_PROTOBUF("application/vnd.kubernetes.protobuf");

        final String accept;

        Format(String accept) {
            this.accept = accept;
        }
    }

    private static final byte[] VALUE_FIELD = "\"value\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_CONNECTING = 256;

    private final InetSocketAddress address;
    private final IntFunction<String> targets;
    private volatile IntFunction<String> headers = i -> "";
    private final Format format;
    private final int sampleEvery;
    private final Loop[] loops;
    private final LongAdder frames = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final AtomicInteger attached = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger ended = new AtomicInteger();
    private final AtomicInteger reachedGoal = new AtomicInteger();
    private final AtomicLong lastGoalNanos = new AtomicLong();
    private volatile long goal;
    private final Recorder latency = new Recorder(TimeUnit.SECONDS.toMicros(60), 3);
    private volatile String lastError;
    private int opened;

    /**
     * @param address the server
     * @param target the request target, e.g. {@code /v1/watch?key=%2Fbench%2F&prefix=true}
     * @param format the frames to expect (also sets {@code Accept})
     * @param threads selector threads
     * @param sampleEvery record latency on every n-th connection (1 = all, 0 = none)
     */
    WatchLoadClient(InetSocketAddress address, String target, Format format, int threads, int sampleEvery)
            throws IOException {
        this(address, i -> target, format, threads, sampleEvery);
    }

    /** As {@link #WatchLoadClient(InetSocketAddress, String, Format, int, int)}, stream i on {@code targets.apply(i)}. */
    WatchLoadClient(InetSocketAddress address, IntFunction<String> targets, Format format, int threads, int sampleEvery)
            throws IOException {
        this.address = address;
        this.targets = targets;
        this.format = format;
        this.sampleEvery = sampleEvery;
        loops = new Loop[threads];
        for (int i = 0; i < threads; i++) {
            loops[i] = new Loop(i);
            loops[i].thread.start();
        }
    }

    /**
     * Frames each stream is expected to get (a resume's catch-up): a stream that has received this
     * many counts as caught up, at the time its last one arrived ({@link #reachedGoal()},
     * {@link #lastGoalNanos()}). Set before {@link #open}; 0 (the default) tracks nothing.
     */
    void goal(long frames) {
        goal = frames;
    }

    /** Streams that have received {@link #goal} frames. */
    int reachedGoal() {
        return reachedGoal.get();
    }

    /** {@link System#nanoTime()} when the last stream so far reached its {@link #goal}, 0 when none did. */
    long lastGoalNanos() {
        return lastGoalNanos.get();
    }

    /**
     * Extra request header lines of stream i, each ending in CRLF (e.g. an
     * {@code Authorization: Bearer} line per identity); none by default. Set before {@link #open}:
     * called once per stream as it connects, never per frame.
     */
    void headers(IntFunction<String> headers) {
        this.headers = headers;
    }

    /** Opens {@code n} more streams (asynchronously; see {@link #attached()}). */
    void open(int n) {
        for (int i = 0; i < n; i++) {
            int id = opened++;
            loops[id % loops.length].pending.add(new Conn(id, sampleEvery > 0 && id % sampleEvery == 0));
        }
        for (Loop l : loops) {
            l.selector.wakeup();
        }
    }

    /** Streams opened so far. */
    int opened() {
        return opened;
    }

    /** Streams whose response headers (status 200) arrived. */
    int attached() {
        return attached.get();
    }

    /** Streams that failed (connect error, non-200, reset). */
    int failed() {
        return failed.get();
    }

    /** Streams the server ended. */
    int ended() {
        return ended.get();
    }

    /** The last failure, for messages. */
    String lastError() {
        return lastError;
    }

    /** Frames received so far, all streams. */
    long frames() {
        return frames.sum();
    }

    /** Body bytes received so far. */
    long bytes() {
        return bytes.sum();
    }

    /** Latency recorder (µs); {@code getIntervalHistogram()} resets it. */
    Recorder latency() {
        return latency;
    }

    /** Waits until every opened stream attached or failed; false on timeout. */
    boolean awaitAttached(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (attached.get() + failed.get() < opened) {
            if (System.currentTimeMillis() > deadline) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    @Override
    public void close() {
        for (Loop l : loops) {
            l.running = false;
            l.selector.wakeup();
        }
        for (Loop l : loops) {
            try {
                l.thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void fail(Conn c, String why) {
        lastError = why;
        failed.incrementAndGet();
        c.state = State.DONE;
    }

    private enum State {
        HEADERS,
        CHUNK_SIZE,
        CHUNK_DATA,
        CHUNK_CRLF,
        DONE
    }

    /** One stream's parse state (owned by its loop's thread). */
    private final class Conn {
        final int id;
        final boolean sampled;
        SocketChannel channel;
        boolean counted;
        ByteBuffer request;
        State state = State.HEADERS;
        byte[] head = new byte[512];
        int headLen;
        long chunkLeft;
        long chunkSize;
        boolean sawCr;
        // frame parsing
        byte[] frame;
        int frameLen;
        long protoLen = -1;
        int varintShift;
        long varintAcc;
        /** Frames of this stream so far, for {@link #goal}. */
        long count;

        Conn(int id, boolean sampled) {
            this.id = id;
            this.sampled = sampled;
            if (sampled) {
                frame = new byte[4096];
            }
        }
    }

    private final class Loop implements Runnable {
        final Selector selector;
        final Thread thread;
        final ConcurrentLinkedQueue<Conn> pending = new ConcurrentLinkedQueue<>();
        final ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024);
        final byte[] arr = new byte[256 * 1024];
        final List<Conn> all = new ArrayList<>();
        int connecting;
        volatile boolean running = true;

        Loop(int i) throws IOException {
            selector = Selector.open();
            thread = new Thread(this, "watch-client-" + i);
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (running) {
                    startPending();
                    selector.select(100);
                    Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                    while (it.hasNext()) {
                        SelectionKey k = it.next();
                        it.remove();
                        Conn c = (Conn) k.attachment();
                        try {
                            if (!k.isValid()) {
                                continue;
                            }
                            if (k.isConnectable()) {
                                c.counted = false;
                                connecting--;
                                c.channel.finishConnect();
                                k.interestOps(SelectionKey.OP_WRITE);
                            }
                            if (k.isValid() && k.isWritable()) {
                                c.channel.write(c.request);
                                if (!c.request.hasRemaining()) {
                                    c.request = null;
                                    k.interestOps(SelectionKey.OP_READ);
                                }
                            }
                            if (k.isValid() && k.isReadable()) {
                                read(c, k);
                            }
                        } catch (IOException | RuntimeException e) {
                            if (c.state != State.DONE) {
                                fail(c, "stream " + c.id + ": " + e);
                            }
                            if (c.counted) {
                                c.counted = false;
                                connecting--;
                            }
                            k.cancel();
                            closeQuietly(c);
                        }
                    }
                }
            } catch (IOException e) {
                lastError = e.toString();
            } finally {
                for (Conn c : all) {
                    closeQuietly(c);
                }
                try {
                    selector.close();
                } catch (IOException ignored) {
                    // closing
                }
            }
        }

        private void startPending() throws IOException {
            while (connecting < MAX_CONNECTING) {
                Conn c = pending.poll();
                if (c == null) {
                    return;
                }
                SocketChannel ch = SocketChannel.open();
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                c.channel = ch;
                c.request = ByteBuffer.wrap(
                        ("GET " + targets.apply(c.id) + " HTTP/1.1\r\nHost: " + address.getHostString() + ":"
                                        + address.getPort() + "\r\nAccept: "
                                        + format.accept
                                        + "\r\n"
                                        + headers.apply(c.id)
                                        + "\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                all.add(c);
                if (ch.connect(address)) {
                    ch.register(selector, SelectionKey.OP_WRITE, c);
                } else {
                    connecting++;
                    c.counted = true;
                    ch.register(selector, SelectionKey.OP_CONNECT, c);
                }
            }
        }

        private void read(Conn c, SelectionKey k) throws IOException {
            while (true) {
                buf.clear();
                int n = c.channel.read(buf);
                if (n < 0) {
                    if (c.state != State.DONE) {
                        ended.incrementAndGet();
                        c.state = State.DONE;
                    }
                    k.cancel();
                    closeQuietly(c);
                    return;
                }
                if (n == 0) {
                    return;
                }
                buf.flip();
                buf.get(arr, 0, n);
                parse(c, arr, 0, n);
                if (n < buf.capacity()) {
                    return;
                }
            }
        }
    }

    private static void closeQuietly(Conn c) {
        try {
            if (c.channel != null) {
                c.channel.close();
            }
        } catch (IOException ignored) {
            // closing
        }
    }

    /** Advances {@code c}'s state machine over {@code b[off, off+len)}. */
    private void parse(Conn c, byte[] b, int off, int len) {
        int end = off + len;
        int i = off;
        while (i < end) {
            switch (c.state) {
                case HEADERS: {
                    while (i < end) {
                        if (c.headLen == c.head.length) {
                            c.head = Arrays.copyOf(c.head, c.head.length * 2);
                        }
                        c.head[c.headLen++] = b[i++];
                        int h = c.headLen;
                        if (h >= 4
                                && c.head[h - 4] == '\r'
                                && c.head[h - 3] == '\n'
                                && c.head[h - 2] == '\r'
                                && c.head[h - 1] == '\n') {
                            String headers = new String(c.head, 0, h, StandardCharsets.ISO_8859_1);
                            c.head = null;
                            if (!headers.startsWith("HTTP/1.1 200")) {
                                fail(
                                        c,
                                        "stream " + c.id + ": "
                                                + headers.lines().findFirst().orElse(""));
                                return;
                            }
                            if (!headers.toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked")) {
                                fail(c, "stream " + c.id + ": not chunked: " + headers);
                                return;
                            }
                            attached.incrementAndGet();
                            c.state = State.CHUNK_SIZE;
                            c.chunkSize = 0;
                            break;
                        }
                    }
                    break;
                }
                case CHUNK_SIZE: {
                    byte x = b[i++];
                    if (x == '\n') {
                        if (c.chunkSize == 0) {
                            ended.incrementAndGet();
                            c.state = State.DONE;
                            return;
                        }
                        c.chunkLeft = c.chunkSize;
                        c.state = State.CHUNK_DATA;
                    } else if (x != '\r') {
                        int d = Character.digit(x, 16);
                        if (d >= 0) {
                            c.chunkSize = c.chunkSize * 16 + d;
                        }
                    }
                    break;
                }
                case CHUNK_DATA: {
                    int n = (int) Math.min(c.chunkLeft, end - i);
                    body(c, b, i, n);
                    i += n;
                    c.chunkLeft -= n;
                    if (c.chunkLeft == 0) {
                        c.state = State.CHUNK_CRLF;
                        c.sawCr = false;
                    }
                    break;
                }
                case CHUNK_CRLF: {
                    byte x = b[i++];
                    if (x == '\n') {
                        c.state = State.CHUNK_SIZE;
                        c.chunkSize = 0;
                    }
                    break;
                }
                case DONE:
                default:
                    return;
            }
        }
    }

    /** Frame bytes of the body. */
    private void body(Conn c, byte[] b, int off, int len) {
        bytes.add(len);
        if (format == Format.JSON) {
            int n = 0;
            int start = off;
            for (int i = off; i < off + len; i++) {
                if (b[i] == '\n') {
                    n++;
                    if (c.sampled) {
                        appendFrame(c, b, start, i - start);
                        jsonFrame(c.frame, c.frameLen);
                        c.frameLen = 0;
                    }
                    start = i + 1;
                }
            }
            if (c.sampled && start < off + len) {
                appendFrame(c, b, start, off + len - start);
            }
            if (n > 0) {
                counted(c, n);
            }
            return;
        }
        int i = off;
        int end = off + len;
        int n = 0;
        while (i < end) {
            if (c.protoLen < 0 && format == Format.KUBE_PROTOBUF) {
                c.varintAcc = (c.varintAcc << 8) | (b[i++] & 0xff);
                if (++c.varintShift == 4) {
                    c.protoLen = c.varintAcc;
                    c.varintAcc = 0;
                    c.varintShift = 0;
                    c.frameLen = 0;
                }
                continue;
            }
            if (c.protoLen < 0) {
                int x = b[i++] & 0xff;
                c.varintAcc |= (long) (x & 0x7f) << c.varintShift;
                c.varintShift += 7;
                if ((x & 0x80) == 0) {
                    c.protoLen = c.varintAcc;
                    c.varintAcc = 0;
                    c.varintShift = 0;
                    c.frameLen = 0;
                }
                continue;
            }
            int take = (int) Math.min(c.protoLen - c.frameLen, end - i);
            if (c.sampled) {
                appendFrame(c, b, i, take);
            } else {
                c.frameLen += take;
            }
            i += take;
            if (c.frameLen == c.protoLen) {
                n++;
                if (c.sampled && format == Format.PROTOBUF) {
                    try {
                        WatchEvent e = WatchEvent.parseFrom(ByteBuffer.wrap(c.frame, 0, c.frameLen));
                        record(LatencyStamp.fromBytes(e.getObject().getValue()));
                    } catch (IOException ex) {
                        lastError = "bad protobuf frame: " + ex;
                    }
                }
                c.protoLen = -1;
                c.frameLen = 0;
            }
        }
        if (n > 0) {
            counted(c, n);
        }
    }

    private void counted(Conn c, int n) {
        frames.add(n);
        long g = goal;
        if (g > 0 && c.count < g && c.count + n >= g) {
            // Only the crossing is recorded, so the per-frame cost stays one addition.
            long now = System.nanoTime();
            lastGoalNanos.accumulateAndGet(now, Math::max);
            reachedGoal.incrementAndGet();
        }
        c.count += n;
    }

    private static void appendFrame(Conn c, byte[] b, int off, int len) {
        if (c.frameLen + len > c.frame.length) {
            c.frame = Arrays.copyOf(c.frame, Math.max(c.frame.length * 2, c.frameLen + len));
        }
        System.arraycopy(b, off, c.frame, c.frameLen, len);
        c.frameLen += len;
    }

    private void jsonFrame(byte[] f, int len) {
        int at = indexOf(f, len, VALUE_FIELD);
        if (at >= 0 && at + VALUE_FIELD.length + 12 <= len) {
            record(LatencyStamp.fromBase64(f, at + VALUE_FIELD.length));
        }
    }

    private void record(long stamp) {
        if (stamp <= 0) {
            return;
        }
        long micros = (System.nanoTime() - stamp) / 1000;
        if (micros >= 0 && micros < TimeUnit.SECONDS.toMicros(60)) {
            latency.recordValue(micros);
        }
    }

    private static int indexOf(byte[] hay, int len, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= len; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
