package io.watchfanout.fanout.http;

import io.watchfanout.fanout.frame.ProtoJson;
import io.watchfanout.fanout.watch.Statuses;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import org.xnio.channels.StreamSourceChannel;
import org.xnio.conduits.AbstractStreamSinkConduit;
import org.xnio.conduits.Conduits;
import org.xnio.conduits.StreamSinkConduit;

/**
 * The write side of an accepted connection, below Undertow: gives the 400 that Undertow's HTTP
 * parser sends on its own a JSON {@code Status} body. Undertow refuses a request it cannot parse
 * (a malformed request line or header line, headers over {@link HttpApi#MAX_HEADER_BYTES}) before
 * any handler runs, by writing a fixed response with no body ({@link #BARE}: a private constant of
 * its {@code HttpReadListener}, with no option or hook to change it) and closing the connection.
 * This conduit sees that exact response written in one piece and writes, in its place, a 400 with
 * {@code Content-Type: application/json} and a {@code Status} saying what can be wrong (the parser
 * does not tell which). Every other write passes through, after one length comparison.
 *
 * <p>Not thread-safe: used by the connection's IO thread, as every conduit.
 */
final class ParserRefusalBody extends AbstractStreamSinkConduit<StreamSinkConduit> {
    /** What Undertow writes when its parser refuses a request (undertow-core 2.3's HttpReadListener). */
    static final byte[] BARE = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII);

    /** What this conduit writes instead. */
    static final byte[] WITH_BODY = withBody();

    /** The rest of {@link #WITH_BODY} that the socket has not taken yet, or null. */
    private ByteBuffer pending;

    private boolean terminateAsked;

    ParserRefusalBody(StreamSinkConduit next) {
        super(next);
    }

    private static byte[] withBody() {
        byte[] json = ProtoJson.toJson(Statuses.badRequest("the request cannot be read as HTTP/1.1: a malformed "
                + "request line or header line, or request headers over " + HttpApi.MAX_HEADER_BYTES
                + " bytes (expected: 'METHOD target HTTP/1.1', then 'Name: value' lines, in all at most "
                + HttpApi.MAX_HEADER_BYTES + " bytes)"));
        byte[] body = java.util.Arrays.copyOf(json, json.length + 1);
        body[json.length] = '\n';
        byte[] head = ("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                        + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] all = java.util.Arrays.copyOf(head, head.length + body.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    /** True when {@code src}'s remaining bytes are exactly {@link #BARE}; its position does not move. */
    static boolean isBare(ByteBuffer src) {
        return src.remaining() == BARE.length && src.equals(ByteBuffer.wrap(BARE));
    }

    /** Writes what is pending; true when nothing is left. */
    private boolean drain() throws IOException {
        while (pending != null) {
            if (next.write(pending) == 0 && pending.hasRemaining()) {
                return false;
            }
            if (!pending.hasRemaining()) {
                pending = null;
            }
        }
        return true;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        if (!drain()) {
            return 0;
        }
        if (isBare(src)) {
            src.position(src.limit());
            pending = ByteBuffer.wrap(WITH_BODY);
            drain();
            return BARE.length;
        }
        return next.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offs, int len) throws IOException {
        return drain() ? next.write(srcs, offs, len) : 0;
    }

    @Override
    public int writeFinal(ByteBuffer src) throws IOException {
        return Conduits.writeFinalBasic(this, src);
    }

    @Override
    public long writeFinal(ByteBuffer[] srcs, int offs, int len) throws IOException {
        return Conduits.writeFinalBasic(this, srcs, offs, len);
    }

    @Override
    public long transferFrom(FileChannel src, long position, long count) throws IOException {
        return drain() ? next.transferFrom(src, position, count) : 0;
    }

    @Override
    public long transferFrom(StreamSourceChannel source, long count, ByteBuffer throughBuffer) throws IOException {
        if (!drain()) {
            throughBuffer.limit(0);
            return 0;
        }
        return next.transferFrom(source, count, throughBuffer);
    }

    @Override
    public void terminateWrites() throws IOException {
        if (drain()) {
            next.terminateWrites();
        } else {
            // The rest of the replacement first; flush() terminates once it is out.
            terminateAsked = true;
        }
    }

    @Override
    public boolean flush() throws IOException {
        if (!drain()) {
            return false;
        }
        if (terminateAsked) {
            terminateAsked = false;
            next.terminateWrites();
        }
        return next.flush();
    }
}
