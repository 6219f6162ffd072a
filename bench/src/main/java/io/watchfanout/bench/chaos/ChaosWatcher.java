package io.watchfanout.bench.chaos;

import com.google.protobuf.ByteString;
import io.watchfanout.bench.chaos.Verifier.Ev;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One watch client of the chaos run: a thread that watches every key under a prefix through
 * the fan-out nodes over HTTP (protobuf frames) and follows README's resume rule. It keeps the
 * last complete point R (a bookmark, or the last frame of a revision known to be complete);
 * when its stream breaks (connection reset or refused, no byte for {@code readTimeoutMillis}
 * although bookmarks come every second, an ERROR frame) it drops the frames of an unfinished
 * revision and resumes from R on another node, at random. On 410 Expired it tries the other nodes from R,
 * and when every node answered 410 it lists again ({@code /v1/kv}) and watches from the list's
 * revision; the revisions it skipped that way are a gap the verifier leaves out, and the list
 * is checked against etcd at its revision.
 *
 * <p>Faults of its own: {@link #vanish} (the client closes its connection with a reset and comes
 * back later), {@link #stall} (it stops reading, so that the node's buffers fill up).
 *
 * <p>Not the testkit's {@code WatchClient}: a chaos watcher meets faults that client does not
 * handle (read timeouts, resets, 410 Expired followed by a new list) and records every gap
 * for the verifier, on its own blocking socket that it can reset or stall.
 *
 * <p>Thread-safety: the received events are written by the watcher's thread and read after
 * {@link #close()} (which joins it); the progress fields are volatile or atomic.
 */
final class ChaosWatcher implements AutoCloseable {
    private static final Map<String, String> KEYS = new ConcurrentHashMap<>();

    /** A list taken after 410 on every node: at {@code revision}, key → value hash. */
    record Relist(long from, long revision, Map<String, Integer> kvs) {}

    private final int id;
    private final int[] ports;
    private final String prefix;
    private final long start;
    private final int readTimeoutMillis;
    private final Thread thread;
    private final List<Ev> received = new ArrayList<>();
    private final List<Ev> pending = new ArrayList<>();
    private final List<long[]> gaps = new ArrayList<>();
    private final List<Relist> relists = new ArrayList<>();
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong expiredAnswers = new AtomicLong();
    private final AtomicLong regressions = new AtomicLong();
    private final AtomicLong streams = new AtomicLong();
    private volatile boolean running = true;
    private volatile long committed;
    private volatile long stallUntil;
    private volatile long vanishUntil;
    private volatile Socket socket;
    private volatile String state = "starting";
    private volatile String lastProblem = "";
    private volatile long lastFrameNanos = System.nanoTime();
    private int node;
    private long pendingRevision = -1;

    ChaosWatcher(int id, int[] ports, String prefix, long start, int readTimeoutMillis) {
        this.id = id;
        this.ports = ports.clone();
        this.prefix = prefix;
        this.start = start;
        this.committed = start;
        this.readTimeoutMillis = readTimeoutMillis;
        this.node = id % ports.length;
        this.thread = new Thread(this::run, "chaos-watcher-" + id);
        this.thread.setDaemon(true);
    }

    ChaosWatcher begin() {
        thread.start();
        return this;
    }

    int id() {
        return id;
    }

    /** R: every event up to this revision was received, or skipped by a list. */
    long committed() {
        return committed;
    }

    long start() {
        return start;
    }

    String state() {
        return state + (lastProblem.isEmpty() ? "" : "; last problem: " + lastProblem) + "; last frame "
                + (System.nanoTime() - lastFrameNanos) / 1_000_000 + " ms ago";
    }

    long reconnects() {
        return reconnects.get();
    }

    long expiredAnswers() {
        return expiredAnswers.get();
    }

    long regressions() {
        return regressions.get();
    }

    long streams() {
        return streams.get();
    }

    /** After {@link #close()}: the events of every complete revision, in arrival order. */
    List<Ev> received() {
        return received;
    }

    /** After {@link #close()}: the skipped ranges (from, to] of the lists. */
    List<long[]> gaps() {
        return gaps;
    }

    List<Relist> relists() {
        return relists;
    }

    /** The client drops its connection (TCP reset) and stays away for {@code millis}. */
    void vanish(long millis) {
        vanishUntil = System.nanoTime() + millis * 1_000_000;
        Socket s = socket;
        if (s != null) {
            try {
                s.setSoLinger(true, 0);
                s.close();
            } catch (IOException e) {
                // already gone
            }
        }
    }

    /**
     * The local and the node's port of the watch stream it reads now, or null when it is not
     * streaming (connecting, vanished, stalled, between streams). For a cut of its connection.
     */
    int[] streamPorts() {
        Socket s = socket;
        if (s == null || !state.startsWith("streaming") || !s.isConnected() || s.isClosed()) {
            return null;
        }
        return new int[] {s.getLocalPort(), s.getPort()};
    }

    /** The client stops reading for {@code millis} (its connection stays open). */
    void stall(long millis) {
        stallUntil = System.nanoTime() + millis * 1_000_000;
    }

    private void run() {
        Set<Integer> expiredOn = new HashSet<>();
        long expiredAt = -1;
        while (running) {
            long away = vanishUntil - System.nanoTime();
            if (away > 0) {
                state = "vanished";
                sleep(Math.min(away / 1_000_000 + 1, 200));
                continue;
            }
            int port = ports[node];
            state = "connecting to :" + port + " from " + committed;
            String outcome;
            try {
                outcome = stream(port);
            } catch (IOException | RuntimeException e) {
                outcome =
                        e instanceof SocketTimeoutException ? "silent for " + readTimeoutMillis + " ms" : e.toString();
            }
            pending.clear();
            pendingRevision = -1;
            if (!running) {
                break;
            }
            if (outcome.equals("410")) {
                expiredAnswers.incrementAndGet();
                if (expiredAt != committed) {
                    expiredOn.clear();
                    expiredAt = committed;
                }
                expiredOn.add(node);
                if (expiredOn.size() >= ports.length) {
                    relist();
                    expiredOn.clear();
                }
            } else if (!outcome.isEmpty()) {
                lastProblem = ":" + port + " " + outcome;
            }
            reconnects.incrementAndGet();
            node = nextNode(outcome.equals("410") ? expiredOn : Set.of());
            sleep(outcome.equals("410") ? 20 : 100);
        }
        state = "closed";
    }

    /** One watch stream; returns "410" after Expired, "" or the reason when it ended. */
    private String stream(int port) throws IOException {
        try (Socket s = new Socket()) {
            socket = s;
            s.setReceiveBufferSize(32 * 1024);
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            s.setSoTimeout(readTimeoutMillis);
            if (vanishUntil > System.nanoTime()) {
                return "vanished";
            }
            String target = "/v1/watch?key=" + URLEncoder.encode(prefix, StandardCharsets.UTF_8)
                    + "&prefix=true&allowWatchBookmarks=true&resourceVersion=" + committed;
            OutputStream out = s.getOutputStream();
            out.write(("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + port
                            + "\r\nAccept: application/x-protobuf\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = new BufferedInputStream(s.getInputStream(), 16 * 1024);
            HttpLines.Head head = HttpLines.readHead(in);
            if (head.status() == 410) {
                return "410";
            }
            if (head.status() != 200) {
                return "HTTP " + head.status();
            }
            streams.incrementAndGet();
            state = "streaming from :" + port;
            InputStream body = new ChunkedInput(in);
            while (running) {
                long stalled = stallUntil - System.nanoTime();
                if (stalled > 0) {
                    state = "stalled on :" + port;
                    sleep(Math.min(stalled / 1_000_000 + 1, 100));
                    continue;
                }
                state = "streaming from :" + port;
                WatchEvent f = WatchEvent.parseDelimitedFrom(body);
                if (f == null) {
                    return "stream ended";
                }
                lastFrameNanos = System.nanoTime();
                switch (f.getType()) {
                    case BOOKMARK -> {
                        commitPending();
                        if (f.getResourceVersion() < committed) {
                            regressions.incrementAndGet();
                        }
                        committed = Math.max(committed, f.getResourceVersion());
                    }
                    case ADDED, MODIFIED, DELETED -> frame(f);
                    case ERROR -> {
                        return f.getStatus().getCode() == 410
                                ? "410"
                                : "ERROR " + f.getStatus().getCode() + " "
                                        + f.getStatus().getMessage();
                    }
                    default -> {
                        return "unknown frame type " + f.getType();
                    }
                }
            }
            return "";
        } finally {
            socket = null;
        }
    }

    private void frame(WatchEvent f) {
        long rv = f.getResourceVersion();
        if (rv != pendingRevision) {
            commitPending();
            if (rv <= committed) {
                regressions.incrementAndGet(); // a revision it has (the verifier counts the duplicate)
            }
        }
        pendingRevision = rv;
        KeyValue kv = f.getObject();
        int type = switch (f.getType()) {
            case ADDED -> Verifier.ADDED;
            case MODIFIED -> Verifier.MODIFIED;
            default -> Verifier.DELETED;
        };
        pending.add(new Ev(
                rv,
                key(kv.getKey()),
                type,
                type == Verifier.DELETED ? 0 : kv.getValue().hashCode()));
        if (f.getCount() > 0 && f.getIndex() == f.getCount() - 1) {
            commitPending();
        }
    }

    /**
     * Another node, at random, so that the watchers of a node that failed spread over the others
     * (moving each to the next one in turn gathers them all on one node after a few faults);
     * after a 410 one that has not answered 410 for this revision yet.
     */
    private int nextNode(Set<Integer> expiredOn) {
        List<Integer> candidates = new ArrayList<>();
        for (int i = 0; i < ports.length; i++) {
            if (i != node && !expiredOn.contains(i)) {
                candidates.add(i);
            }
        }
        if (candidates.isEmpty()) {
            return (node + 1) % ports.length;
        }
        return candidates.get(ThreadLocalRandom.current().nextInt(candidates.size()));
    }

    private void commitPending() {
        if (pendingRevision < 0) {
            return;
        }
        received.addAll(pending);
        pending.clear();
        committed = Math.max(committed, pendingRevision);
        pendingRevision = -1;
    }

    private void relist() {
        for (int i = 0; i < ports.length && running; i++) {
            int port = ports[(node + i) % ports.length];
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                s.setSoTimeout(readTimeoutMillis);
                OutputStream out = s.getOutputStream();
                out.write(("GET /v1/kv?key=" + URLEncoder.encode(prefix, StandardCharsets.UTF_8)
                                + "&prefix=true HTTP/1.1\r\n" + "Host: 127.0.0.1:" + port
                                + "\r\nAccept: application/x-protobuf\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = new BufferedInputStream(s.getInputStream());
                HttpLines.Head head = HttpLines.readHead(in);
                byte[] body = HttpLines.readBody(in, head);
                if (head.status() != 200) {
                    continue;
                }
                KeyValueList list = KeyValueList.parseFrom(body);
                Map<String, Integer> kvs = new HashMap<>();
                for (KeyValue kv : list.getKvsList()) {
                    kvs.put(key(kv.getKey()), kv.getValue().hashCode());
                }
                long from = committed;
                long at = list.getResourceVersion();
                relists.add(new Relist(from, at, kvs));
                gaps.add(new long[] {from, Math.max(from, at)});
                committed = Math.max(from, at);
                return;
            } catch (IOException | RuntimeException e) {
                lastProblem = "list on :" + port + ": " + e;
            }
        }
    }

    static String key(ByteString bytes) {
        String k = bytes.toStringUtf8();
        return KEYS.computeIfAbsent(k, x -> x);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(Math.max(1, millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        Socket s = socket;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
