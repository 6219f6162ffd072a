package io.watchfanout.fanout.transport;

import io.undertow.conduits.ChunkedStreamSourceConduit;
import io.undertow.conduits.FixedLengthStreamSourceConduit;
import io.undertow.server.AbstractServerConnection;
import io.undertow.server.HttpServerExchange;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.channels.StreamSourceChannel;
import org.xnio.conduits.ConduitStreamSourceChannel;

/**
 * Notices that the client of a long response hung up, although nothing is due to be written to
 * it: once the request (and its body) has been read, the connection's read side is idle until the client
 * closes it (end-of-stream) or it breaks (a reset, or TCP keepalive probes unanswered). For
 * responses after which the connection closes: bytes a client sends after its request
 * (pipelining) are read and dropped.
 *
 * <p>Public for the front ends mounted on the HTTP listener ({@link HttpApi#mount}) whose
 * answers are streams too.
 *
 * <p>Stateless; the callbacks run on the connection's IO thread.
 */
public final class HangUp {
    private static final Logger LOG = LoggerFactory.getLogger(HangUp.class);
    private static final Method SOURCE_CHANNEL = openSourceChannel();

    private HangUp() {}

    /**
     * Reads the connection of {@code exchange} from now on, and runs {@code closed} at its end or
     * {@code failed} when it breaks. Does nothing (the hang-up is noticed at the next write) when
     * the read side cannot be had.
     */
    public static void watch(HttpServerExchange exchange, Runnable closed, Consumer<IOException> failed) {
        StreamSourceChannel source = sourceChannel(exchange);
        if (source == null) {
            return;
        }
        bypassBody(exchange, source);
        ByteBuffer scratch = ByteBuffer.allocate(512);
        source.getReadSetter().set(ch -> {
            try {
                int n;
                do {
                    scratch.clear();
                    n = ch.read(scratch);
                } while (n > 0);
                if (n < 0) {
                    ch.suspendReads();
                    closed.run();
                }
            } catch (IOException e) {
                ch.suspendReads();
                failed.accept(e);
            }
        });
        source.resumeReads();
    }

    /**
     * A request with a body (read whole by now) leaves the connection's read side on the body's
     * conduit, which answers end-of-stream for ever once the body is done and never reads the
     * socket again: the read side goes back to the connection's own conduit, where the client's
     * end-of-stream shows. The connection closes after the response, so Undertow reads no request
     * after this one through it.
     */
    private static void bypassBody(HttpServerExchange exchange, StreamSourceChannel source) {
        if (source instanceof ConduitStreamSourceChannel channel
                && (channel.getConduit() instanceof FixedLengthStreamSourceConduit
                        || channel.getConduit() instanceof ChunkedStreamSourceConduit)
                && exchange.isRequestComplete()
                && exchange.getConnection() instanceof AbstractServerConnection connection) {
            channel.setConduit(connection.getOriginalSourceConduit());
        }
    }

    /**
     * The connection's read side. Undertow keeps {@code ServerConnection.getSourceChannel()}
     * protected; it is the only handle on a connection once its request body is done, so it is
     * opened once by reflection. Null, and no hang-up detection, if that fails.
     */
    private static StreamSourceChannel sourceChannel(HttpServerExchange exchange) {
        if (SOURCE_CHANNEL == null) {
            return null;
        }
        try {
            return (StreamSourceChannel) SOURCE_CHANNEL.invoke(exchange.getConnection());
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("no read side for {}: {}", exchange.getConnection(), e.toString());
            return null;
        }
    }

    private static Method openSourceChannel() {
        try {
            Method m = io.undertow.server.ServerConnection.class.getDeclaredMethod("getSourceChannel");
            m.setAccessible(true);
            return m;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LoggerFactory.getLogger(HangUp.class)
                    .warn(
                            "cannot open Undertow's connection read side ({}); streams of quiet keys notice a "
                                    + "client that hung up only at their next write",
                            e.toString());
            return null;
        }
    }
}
