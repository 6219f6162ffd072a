package io.watchfanout.fanout.transport;

import io.undertow.server.handlers.HostHeaderHandler;
import io.watchfanout.fanout.frame.ProtoJson;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
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
 * does not tell which). The same for the 400s of Undertow's {@code HostHeaderHandler} (no
 * {@code Host} header, several, a malformed one, or an absolute-form target naming another host),
 * which it wraps around every root handler so that none of the node's runs first: a short
 * response head with one of that handler's reasons in its status line and
 * {@code Content-Length: 0} gets a {@code Status} naming the reason. Every other write passes
 * through, after a length comparison (and, for a head shorter than 512 bytes starting
 * {@code HTTP/1.}, a look at its status line).
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

    /**
     * The reasons Undertow's {@link HostHeaderHandler} (which Undertow wraps around every root
     * handler, so that none of the node's own runs first) puts in the status line of its bodiless
     * 400s.
     */
    private static final Set<String> HOST_CHECK_REASONS = Set.of(
            HostHeaderHandler.STATUS_NO_HOST_HEADER,
            HostHeaderHandler.STATUS_TOO_MANY_HOST_HEADERS,
            HostHeaderHandler.STATUS_MALFORMED_PORT,
            HostHeaderHandler.STATUS_MALFORMED_IP_LITERAL,
            HostHeaderHandler.STATUS_MALFORMED_IP_LITERAL_BAD_CHARS,
            HostHeaderHandler.STATUS_HOST_NO_MATCH);

    /** A response head of the Host check is short: its status line and three headers. */
    private static final int MAX_HOST_CHECK_HEAD = 512;

    private static byte[] withBody() {
        return response(
                "HTTP/1.1 400 Bad Request",
                "the request cannot be read as HTTP/1.1: a malformed "
                        + "request line or header line, or request headers over " + HttpApi.MAX_HEADER_BYTES
                        + " bytes (expected: 'METHOD target HTTP/1.1', then 'Name: value' lines, in all at most "
                        + HttpApi.MAX_HEADER_BYTES + " bytes)");
    }

    /**
     * The replacement for a bodiless 400 of Undertow's Host check in {@code src} (its remaining
     * bytes, position unmoved), or null when {@code src} is not one.
     */
    static byte[] hostCheckWithBody(ByteBuffer src) {
        int n = src.remaining();
        if (n > MAX_HOST_CHECK_HEAD || n < 16) {
            return null;
        }
        byte[] bytes = new byte[n];
        src.duplicate().get(bytes);
        String head = new String(bytes, StandardCharsets.ISO_8859_1);
        int eol = head.indexOf("\r\n");
        if (!head.startsWith("HTTP/1.") || !head.endsWith("\r\n\r\n") || eol < 0) {
            return null;
        }
        String statusLine = head.substring(0, eol);
        if (!statusLine.startsWith("HTTP/1.1 400 ") && !statusLine.startsWith("HTTP/1.0 400 ")) {
            return null;
        }
        String reason = statusLine.substring("HTTP/1.1 400 ".length());
        if (!HOST_CHECK_REASONS.contains(reason) || !head.contains("\r\nContent-Length: 0\r\n")) {
            return null;
        }
        return response(
                statusLine,
                "the Host header is missing, given more than once, malformed, or names another host than an "
                        + "absolute-form target (" + reason + "; expected: one 'Host: host[:port]' header, "
                        + "the same host as a 'http://host/...' target)");
    }

    /** A whole 400 response: {@code statusLine}, then a {@code Status} with {@code message}. */
    private static byte[] response(String statusLine, String message) {
        byte[] json = ProtoJson.toJson(HttpStatuses.badRequest(message));
        byte[] body = Arrays.copyOf(json, json.length + 1);
        body[json.length] = '\n';
        byte[] head = (statusLine + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                        + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] all = Arrays.copyOf(head, head.length + body.length);
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
        byte[] replacement = isBare(src) ? WITH_BODY : hostCheckWithBody(src);
        if (replacement != null) {
            int taken = src.remaining();
            src.position(src.limit());
            pending = ByteBuffer.wrap(replacement);
            drain();
            return taken;
        }
        return next.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offs, int len) throws IOException {
        if (!drain()) {
            return 0;
        }
        if (len == 1) {
            return write(srcs[offs]);
        }
        return next.write(srcs, offs, len);
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
