package io.watchfanout.fanout.gateway;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.fanout.etcd.JsonGateway;
import io.watchfanout.fanout.transport.HangUp;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.IoUtils;
import org.xnio.XnioIoThread;
import org.xnio.channels.StreamSinkChannel;

/**
 * The answer of one etcd JSON gateway call ({@link GatewayHandler}), written without a thread of
 * its own: grpc's threads hand the status and the lines to a queue ({@link JsonGateway.Sink}),
 * and the exchange's IO thread writes them with non-blocking writes, one line and its newline
 * at a time, as they come (a watch's responses are not held back).
 *
 * <p>A stream ({@code /v3/watch}, {@code /v3/lease/keepalive}, {@code /v3/election/observe},
 * {@code /v3/maintenance/snapshot}) may have nothing to write for as long as its range stays
 * quiet, so its end is not left to a failed write: the connection's read side is watched
 * ({@link HangUp}), and a client that hangs up (a FIN, a reset, or TCP keepalive probes
 * unanswered) has its call canceled and its connection closed at once, the same as a
 * {@code /v1/watch} stream's. Such a response closes its connection when it ends. A call whose
 * socket takes not one byte of waiting lines for {@code writeTimeout} (its client vanished, or
 * stopped reading) is canceled too.
 *
 * <p>Thread-safety: the sink's methods may be called from any thread, one call at a time;
 * everything else runs on the exchange's IO thread.
 */
final class GatewayResponse implements JsonGateway.Sink {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayResponse.class);
    private static final byte[] NEWLINE = {'\n'};
    /** The queue's end marker, after the last line. */
    private static final Object END = new Object();

    private final HttpServerExchange exchange;
    private final XnioIoThread io;
    private final long writeTimeoutNanos;
    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean wakePending = new AtomicBoolean();
    private final AtomicBoolean finished = new AtomicBoolean();
    private final Runnable onFinish;
    private volatile JsonGateway.Call call;

    private StreamSinkChannel channel;
    private ByteBuffer current;
    private boolean closed;
    /** While the socket would not take waiting bytes: when it last took one (System.nanoTime()). */
    private long blockedSinceNanos;

    private boolean blocked;
    private boolean writeTimerArmed;

    /**
     * @param exchange the gateway request, its body read; its IO thread writes the answer
     * @param writeTimeout how long waiting bytes may go without the socket taking one
     * @param onFinish run once when the answer is over, however it ends (IO thread)
     */
    GatewayResponse(HttpServerExchange exchange, Duration writeTimeout, Runnable onFinish) {
        this.exchange = exchange;
        this.io = exchange.getIoThread();
        this.writeTimeoutNanos = writeTimeout.toNanos();
        this.onFinish = onFinish;
    }

    /**
     * Starts serving {@code call}'s answer (IO thread). For a stream ({@code streaming}), watches the
     * connection for the client hanging up and closes it after the answer.
     */
    void start(JsonGateway.Call call, boolean streaming) {
        this.call = call;
        exchange.addExchangeCompleteListener((ex, next) -> {
            finish();
            next.proceed();
        });
        if (streaming) {
            // Only for a stream, whose connection ends with it: a kept-alive connection would
            // gather one listener per unary call for as long as it lives.
            exchange.getConnection().addCloseListener(connection -> finish());
            exchange.setPersistent(false);
            HangUp.watch(exchange, () -> abort("hung up", null), e -> abort("connection broke", e));
        }
        pump();
    }

    @Override
    public void start(int httpStatus) {
        queue.add(httpStatus);
        wake();
    }

    @Override
    public void line(byte[] json) {
        ByteBuffer b = ByteBuffer.allocate(json.length + 1);
        b.put(json).put(NEWLINE).flip();
        queue.add(b);
        wake();
    }

    @Override
    public void end() {
        queue.add(END);
        wake();
    }

    private void wake() {
        if (wakePending.compareAndSet(false, true)) {
            try {
                io.execute(this::pump);
            } catch (RejectedExecutionException e) {
                // The node is stopping, and its connections with it: nothing more to write.
                LOG.debug("gateway answer of {} dropped: {}", exchange.getRequestPath(), e.toString());
            }
        }
    }

    /** Writes what is waiting until the socket would block or nothing is (IO thread). */
    private void pump() {
        wakePending.set(false);
        if (closed || call == null) {
            return;
        }
        try {
            if (channel == null) {
                Object first = queue.poll();
                if (first == null) {
                    return;
                }
                exchange.setStatusCode((Integer) first);
                exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
                channel = exchange.getResponseChannel();
                channel.getWriteSetter().set(ch -> pump());
            }
            while (true) {
                if (current == null || !current.hasRemaining()) {
                    Object next = queue.poll();
                    if (next == null) {
                        current = null;
                        if (channel.flush()) {
                            unblocked();
                        } else {
                            blocked();
                        }
                        return;
                    }
                    if (next == END) {
                        closed = true;
                        // Flushes what is left and ends the response, asynchronously.
                        exchange.endExchange();
                        return;
                    }
                    current = (ByteBuffer) next;
                }
                if (channel.write(current) > 0 && blocked) {
                    // Every byte the socket takes restarts the write timeout's clock.
                    blockedSinceNanos = System.nanoTime();
                }
                if (current.hasRemaining()) {
                    blocked();
                    return;
                }
            }
        } catch (IOException e) {
            abort("write failed", e);
        }
    }

    /** The socket would not take every waiting byte: write again when it can, within the write timeout. */
    private void blocked() {
        if (!blocked) {
            blocked = true;
            blockedSinceNanos = System.nanoTime();
        }
        channel.resumeWrites();
        armWriteTimer(writeTimeoutNanos);
    }

    private void unblocked() {
        blocked = false;
        channel.suspendWrites();
    }

    private void armWriteTimer(long delayNanos) {
        if (writeTimerArmed) {
            return;
        }
        writeTimerArmed = true;
        io.executeAfter(
                () -> {
                    writeTimerArmed = false;
                    if (closed || !blocked) {
                        return;
                    }
                    long waited = System.nanoTime() - blockedSinceNanos;
                    if (waited >= writeTimeoutNanos) {
                        abort("no byte taken for " + writeTimeoutNanos / 1_000_000 + " ms", null);
                    } else {
                        armWriteTimer(writeTimeoutNanos - waited);
                    }
                },
                Math.max(1, delayNanos / 1_000_000),
                TimeUnit.MILLISECONDS);
    }

    /** Cancels the call and closes the connection (IO thread). */
    private void abort(String why, IOException cause) {
        if (closed) {
            return;
        }
        closed = true;
        LOG.debug("gateway client of {}: {}{}", exchange.getRequestPath(), why, cause == null ? "" : ": " + cause);
        finish();
        IoUtils.safeClose(exchange.getConnection());
    }

    /** Once, however the answer ends: the call is canceled (a no-op once it completed) and the owner told. */
    private void finish() {
        if (finished.compareAndSet(false, true)) {
            JsonGateway.Call c = call;
            if (c != null) {
                c.cancel();
            }
            onFinish.run();
        }
    }
}
