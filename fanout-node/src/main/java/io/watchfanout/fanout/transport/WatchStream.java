package io.watchfanout.fanout.transport;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.fanout.watch.CloseReason;
import io.watchfanout.fanout.watch.WakeUps;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchSink;
import io.watchfanout.fanout.watch.WatchStats;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ObjLongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.IoUtils;
import org.xnio.XnioIoThread;
import org.xnio.channels.StreamSinkChannel;

/**
 * The HTTP transport of one {@link Watch}: non-blocking writes on the exchange's IO
 * thread, at most one write in flight, every waiting frame gathered into one write.
 *
 * <p>Why we frame the HTTP chunks ourselves: Undertow's {@code ChunkedStreamSinkConduit}
 * writes only the first buffer of a gathering write (one chunk and one syscall per frame),
 * which would waste the main throughput lever on loopback (docs/BENCHMARKS.md, "limit": ~16 frames per write
 * is ~10x the frame rate of one per write). So the response is marked non-persistent (Undertow
 * then passes bytes through), {@code Transfer-Encoding: chunked} is set by hand, and each
 * write is one chunk: {@code [size CRLF, frame 1..n, CRLF]} with the shared frames
 * {@code duplicate()}d, never copied. The connection closes after the stream, which a
 * watch connection does anyway in practice.
 *
 * <p>Ending: once the watcher is ending (an ERROR frame such as 410 Expired, timeoutSeconds,
 * shutdown), the client gets {@code stalledCloseAfter} to take the last frames; a client that
 * stopped reading (its socket full) has its connection closed then, counted in
 * {@link WatchStats#closedStalled()}, instead of holding it forever. A live or parked stream
 * whose client reads slowly is not subject to this bound: parking is the slow-watcher policy.
 *
 * <p>Write timeout: a stream with bytes waiting whose socket takes none for
 * {@code writeTimeout} is closed and its watcher removed, counted in
 * {@link WatchStats#closed} ({@link CloseReason#WRITE_TIMEOUT}). That tells a dead client
 * from a slow one: a client that vanished without a FIN acknowledges nothing, so once its
 * socket's send buffer is full not one more byte goes in, whereas a slow reader (live or
 * parked) frees some room now and then and every byte the socket takes restarts the clock
 * (when the clock runs out, a write is tried before the stream is judged, as the kernel signals
 * writability only once much of the send buffer is free again). The clock runs only while
 * something waits to be written, so an idle stream is never cut by it (TCP keepalive covers
 * that case, see {@link TcpKeepalive}), and a client that stopped reading altogether is
 * treated as the dead one it is indistinguishable from.
 *
 * <p>Unacknowledged bytes: a stream whose socket takes every byte but whose client acknowledges
 * none (a quiet watch with bookmarks: a few bytes every few seconds never fill the socket, and
 * keepalive probes wait for them to be acknowledged) is found by the node's
 * {@link UnacknowledgedSweeper}, which reads the kernel's retransmission state: once the kernel
 * has retried its bytes without an answer for {@code writeTimeout}, the stream is closed and
 * counted as {@link CloseReason#UNACKNOWLEDGED}. A stream whose socket is full is left to the
 * write timeout when that is due within the sweeper's interval.
 *
 * <p>Thread-safety: everything except {@link #wakeUp()} runs on the exchange's IO thread.
 */
final class WatchStream implements WatchSink {
    private static final Logger LOG = LoggerFactory.getLogger(WatchStream.class);
    /** Frames gathered into one write at most (IOV_MAX is 1024; a chunk header and CRLF ride along). */
    static final int MAX_FRAMES_PER_WRITE = 64;

    private static final ByteBuffer CRLF =
            ByteBuffer.wrap("\r\n".getBytes(StandardCharsets.US_ASCII)).asReadOnlyBuffer();
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    /** A write of no bytes, which makes Undertow send the response's headers. */
    private static final ByteBuffer[] NOTHING = {ByteBuffer.allocate(0)};

    private static final ByteBuffer LAST_CHUNK =
            ByteBuffer.wrap("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)).asReadOnlyBuffer();

    private final HttpServerExchange exchange;
    private final XnioIoThread io;
    private final WatchStats stats;
    private final Duration stalledCloseAfter;
    private final long writeTimeoutNanos;
    private final String nodeId;
    private final WakeUps<WatchStream> wakeUps;
    private final UnacknowledgedSweeper sweeper;
    private final AtomicBoolean wakePending = new AtomicBoolean();
    /** The connection as the sweeper knows it; null until started or if it has no IP addresses. */
    private UnacknowledgedSweeper.ConnectionId connectionId;

    private Watch watcher;
    private StreamSinkChannel channel;
    private final List<ByteBuffer> polled = new ArrayList<>(MAX_FRAMES_PER_WRITE);
    private final ByteBuffer[] pending = new ByteBuffer[MAX_FRAMES_PER_WRITE + 2];
    private final ByteBuffer chunkHeader = ByteBuffer.allocate(16);
    private int pendingFrom;
    private int pendingCount;
    private long pendingBytes;
    private boolean lastChunkQueued;
    private boolean closeTimerArmed;
    private boolean closed;
    /** Bytes are waiting and the socket would not take them all (the pump resumed writes). */
    private boolean blocked;
    /** While blocked: when the socket last took a byte, or when it blocked (System.nanoTime()). */
    private long stalledSinceNanos;

    private boolean writeTimerArmed;
    /** Frames handed to the socket so far, for the end of the watch's grant. */
    private long frames;
    /** Why the stream ended when it ends by itself: the node ended it, or its timeoutSeconds ran out. */
    private String endReason = "ended";
    /** Told once, with the reason and the frames, when the stream ends however it ends; or null. */
    private ObjLongConsumer<String> onEnd;

    WatchStream(
            HttpServerExchange exchange,
            WakeUps<WatchStream> wakeUps,
            WatchStats stats,
            Duration stalledCloseAfter,
            Duration writeTimeout,
            String nodeId,
            UnacknowledgedSweeper sweeper) {
        this.exchange = exchange;
        this.io = exchange.getIoThread();
        this.wakeUps = wakeUps;
        this.sweeper = sweeper;
        this.stats = stats;
        this.stalledCloseAfter = stalledCloseAfter;
        this.writeTimeoutNanos = writeTimeout.toNanos();
        this.nodeId = nodeId;
    }

    /**
     * What to tell when the stream ends, whatever ends it (its client, the node, a timeout, a
     * write failure): the reason ({@code ended}, {@code timeout}, or a {@link CloseReason} such
     * as {@code client_closed}; {@code closed} for other closes) and the frames handed to the
     * socket. Call before {@link #start}; IO thread.
     */
    void onEnd(ObjLongConsumer<String> listener) {
        this.onEnd = listener;
    }

    /**
     * Starts streaming (IO thread): sends the 200 headers, starts the stream timeout, and pulls the first frames.
     *
     * @param preamble bytes sent before the first frame (an event stream's {@code retry:} line),
     *     or null
     */
    void start(Watch w, long timeoutSeconds, String contentType, ByteBuffer preamble) {
        this.watcher = w;
        exchange.setStatusCode(200);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
        exchange.getResponseHeaders().put(Headers.CACHE_CONTROL, "no-cache");
        exchange.setPersistent(false);
        channel = exchange.getResponseChannel();
        exchange.getResponseHeaders().put(Headers.TRANSFER_ENCODING, Headers.CHUNKED.toString());
        channel.getWriteSetter().set(ch -> pump());
        exchange.addExchangeCompleteListener((ex, next) -> {
            abort(null, null);
            next.proceed();
        });
        watchForHangUp();
        if (sweeper != null && !closed) {
            connectionId = sweeper.register(
                    this,
                    exchange.getConnection().getLocalAddress(),
                    exchange.getConnection().getPeerAddress());
        }
        if (timeoutSeconds > 0) {
            io.executeAfter(
                    () -> {
                        if (!closed) {
                            endReason = "timeout";
                            watcher.finish();
                        }
                    },
                    timeoutSeconds,
                    TimeUnit.SECONDS);
        }
        if (preamble != null) {
            // Staged like frames: it goes out in the first chunk, with the headers.
            stage(List.of(preamble));
        } else {
            sendHeaders();
        }
        pump();
    }

    /**
     * Sends the 200 and its headers now, before any frame: a watch from "now" may wait long for its
     * first event, and clients (client-go's and fabric8's watches, as against kube-apiserver, which
     * flushes them at once) wait for the headers before they call the watch open. Undertow writes
     * pending headers with the first write, so this is a write of nothing; a flush alone does not.
     */
    private void sendHeaders() {
        try {
            channel.write(NOTHING, 0, 1);
            channel.flush();
        } catch (IOException e) {
            abort(CloseReason.CONNECTION_ERROR, e);
        }
    }

    /**
     * Notices a client that closed its connection even when no frame is due for a long time (a
     * quiet key without bookmarks): a watch request has no body, so the connection's read side is
     * idle until the client hangs up ({@link HangUp}).
     */
    private void watchForHangUp() {
        HangUp.watch(
                exchange,
                () -> abort(CloseReason.CLIENT_CLOSED, null),
                // A reset, or TCP keepalive probes went unanswered (the client vanished without a FIN).
                e -> abort(CloseReason.CONNECTION_ERROR, e));
    }

    @Override
    public void wakeUp() {
        if (wakePending.compareAndSet(false, true)) {
            wakeUps.wake(this);
        }
    }

    /** The pump of a wake-up, run by the IO thread's {@link WakeUps}. */
    void pumpWoken() {
        wakePending.set(false);
        pump();
    }

    /** Writes until the socket would block or nothing is waiting (IO thread). */
    private void pump() {
        if (closed || channel == null) {
            return;
        }
        if (!closeTimerArmed && watcher.isEnding()) {
            armCloseTimer();
        }
        try {
            while (true) {
                if (pendingBytes > 0) {
                    long n = channel.write(pending, pendingFrom, pendingCount - pendingFrom);
                    if (n > 0) {
                        stalledSinceNanos = System.nanoTime();
                    }
                    pendingBytes -= n;
                    stats.addBytesSent(watcher.spec().encoding(), n);
                    while (pendingFrom < pendingCount && !pending[pendingFrom].hasRemaining()) {
                        pending[pendingFrom++] = null;
                    }
                    if (pendingBytes > 0) {
                        channel.resumeWrites();
                        markBlocked();
                        return;
                    }
                }
                if (!channel.flush()) {
                    channel.resumeWrites();
                    markBlocked();
                    return;
                }
                blocked = false;
                if (lastChunkQueued) {
                    finishExchange();
                    return;
                }
                polled.clear();
                switch (watcher.poll(polled, MAX_FRAMES_PER_WRITE)) {
                    case FRAMES:
                        frames += polled.size();
                        stage(polled);
                        break;
                    case END:
                        stageLastChunk();
                        break;
                    case YIELD:
                        channel.suspendWrites();
                        wakeUp();
                        return;
                    case IDLE:
                    default:
                        channel.suspendWrites();
                        return;
                }
            }
        } catch (IOException e) {
            abort(CloseReason.CONNECTION_ERROR, e);
        } catch (RuntimeException e) {
            abort(null, e);
        }
    }

    /**
     * The socket would not take all waiting bytes (IO thread): starts the write-timeout clock
     * unless it runs already, and arms its timer.
     */
    private void markBlocked() {
        if (!blocked) {
            blocked = true;
            stalledSinceNanos = System.nanoTime();
        }
        if (!writeTimerArmed) {
            armWriteTimer(writeTimeoutNanos);
        }
    }

    /**
     * One timer per blocked stream rather than one per write: when it fires, a stream that took
     * bytes meanwhile re-arms it for the rest of its timeout, one that took none is closed.
     */
    private void armWriteTimer(long delayNanos) {
        writeTimerArmed = true;
        io.executeAfter(
                this::checkWriteTimeout, TimeUnit.NANOSECONDS.toMillis(delayNanos + 999_999), TimeUnit.MILLISECONDS);
    }

    private void checkWriteTimeout() {
        if (!closed && blocked && System.nanoTime() - stalledSinceNanos >= writeTimeoutNanos) {
            // Before judging, try a write: the socket signals writability only once a good part of
            // its send buffer is free again (Linux: half of what is queued), so a client that reads
            // slowly may have made room for some bytes without a write event. A vanished client
            // acknowledges nothing and its full socket takes none. (The timer is still marked armed,
            // so this write arms no second one.)
            pump();
        }
        writeTimerArmed = false;
        if (closed || !blocked) {
            return;
        }
        long stalledFor = System.nanoTime() - stalledSinceNanos;
        if (stalledFor < writeTimeoutNanos) {
            armWriteTimer(writeTimeoutNanos - stalledFor);
            return;
        }
        LOG.info(
                "[node {}] {}: its client took no bytes for {} ms with {} bytes waiting (gone without a FIN, or "
                        + "not reading); closing the connection",
                nodeId,
                watcher,
                TimeUnit.NANOSECONDS.toMillis(stalledFor),
                pendingBytes);
        abort(CloseReason.WRITE_TIMEOUT, null);
    }

    /**
     * The kernel has retried this stream's bytes without an acknowledgement for
     * {@code unacknowledgedNanos} (at least the write timeout): closes the stream on its IO
     * thread, unless its socket is full and the write timeout is due within {@code slackNanos}
     * (it judges such a stream by the same measure, and names it). Any thread.
     *
     * @param txQueue bytes in the socket's send queue not acknowledged, for the log line
     */
    void closeUnacknowledged(long unacknowledgedNanos, long txQueue, long slackNanos) {
        io.execute(() -> {
            if (closed) {
                return;
            }
            if (blocked && System.nanoTime() - stalledSinceNanos >= writeTimeoutNanos - slackNanos) {
                return;
            }
            LOG.info(
                    "[node {}] {}: its client acknowledged none of {} bytes in flight for {} ms while the kernel "
                            + "retried them (gone without a FIN); closing the connection",
                    nodeId,
                    watcher,
                    txQueue,
                    TimeUnit.NANOSECONDS.toMillis(unacknowledgedNanos));
            abort(CloseReason.UNACKNOWLEDGED, null);
        });
    }

    /** The stream has ended: its client gets a bounded time to take the last frames. */
    private void armCloseTimer() {
        closeTimerArmed = true;
        io.executeAfter(
                () -> {
                    if (!closed) {
                        stats.addClosedStalled();
                        LOG.info(
                                "[node {}] {} ended but its client took no last frames within {} ms; closing the connection",
                                nodeId,
                                watcher,
                                stalledCloseAfter.toMillis());
                        abort(null, null);
                    }
                },
                stalledCloseAfter.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void stage(List<ByteBuffer> frames) {
        long size = 0;
        pendingFrom = 0;
        pendingCount = 0;
        pending[pendingCount++] = chunkHeader;
        for (ByteBuffer f : frames) {
            ByteBuffer d = f.duplicate();
            size += d.remaining();
            pending[pendingCount++] = d;
        }
        chunkHeader.clear();
        for (int shift = (63 - Long.numberOfLeadingZeros(size | 1)) & ~3; shift >= 0; shift -= 4) {
            chunkHeader.put(HEX[(int) (size >>> shift) & 15]);
        }
        chunkHeader.put((byte) '\r').put((byte) '\n').flip();
        pending[pendingCount++] = CRLF.duplicate();
        pendingBytes = size + chunkHeader.remaining() + 2;
    }

    private void stageLastChunk() {
        pendingFrom = 0;
        pendingCount = 1;
        pending[0] = LAST_CHUNK.duplicate();
        pendingBytes = pending[0].remaining();
        lastChunkQueued = true;
    }

    private void finishExchange() {
        closed = true;
        ended(endReason);
        unregister();
        watcher.close();
        try {
            channel.shutdownWrites();
            channel.flush();
        } catch (IOException e) {
            LOG.debug("[node {}] closing {}: {}", nodeId, watcher, e.toString());
        }
        exchange.endExchange();
    }

    private void ended(String reason) {
        if (onEnd != null) {
            onEnd.accept(reason, frames);
        }
    }

    private void unregister() {
        if (sweeper != null) {
            sweeper.unregister(connectionId, this);
        }
    }

    /**
     * The client went away or a write failed: drop the connection and the watcher.
     *
     * @param reason what {@link WatchStats#closed} counts it as, or null for a close counted
     *     elsewhere or not at all (stalled-close bound, node shutdown, a bug)
     */
    private void abort(CloseReason reason, Throwable cause) {
        if (closed) {
            return;
        }
        closed = true;
        ended(reason == null ? "closed" : reason.name().toLowerCase(Locale.ROOT));
        unregister();
        if (reason != null) {
            stats.addClosed(reason);
        }
        if (cause != null) {
            LOG.debug("[node {}] {} ended: {}", nodeId, watcher, cause.toString());
        }
        if (watcher != null) {
            watcher.close();
        }
        IoUtils.safeClose(exchange.getConnection());
    }
}
