package io.watchfanout.fanout.v1;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.Responses;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** How {@code GET /v1/watch} answers a watch refused before its stream, and opens an event stream. */
final class WatchErrors {
    private WatchErrors() {}

    /**
     * Answers a watch that is refused before its stream starts. An event-stream request
     * ({@code Accept: text/event-stream}) refused for anything but its own form (400 BadRequest,
     * 406 NotAcceptable) gets 200 with a short event stream instead: the {@code retry:} line,
     * one {@code ERROR} event whose data is the {@code Status}, and the end. A browser's
     * {@code EventSource} fails for good on any other status without letting the page read the
     * body (the HTML standard's "fail the connection"), so a 410 would leave the page unable to
     * tell "list again" from "try another node"; inside a 200 it gets the same {@code ERROR}
     * frame as a stream that fails later. {@code Retry-After} is kept as a header. Every other
     * request (JSON, protobuf: Kubernetes clients read the status code) gets the plain error.
     *
     * @param retryAfterSeconds the node's {@code Retry-After}, also the event stream's
     *     reconnection delay ({@link #sseRetry(int)}), {@code >= 1}
     */
    static void watchError(HttpServerExchange exchange, ApiException e, FrameEncoder encoder, int retryAfterSeconds) {
        int code = e.status().getCode();
        if (code == 400 || code == 406 || !acceptsEventStream(exchange)) {
            Responses.error(exchange, e);
            return;
        }
        exchange.setStatusCode(200);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, WatchEventEncodings.SSE.mediaType());
        exchange.getResponseHeaders().put(Headers.CACHE_CONTROL, "no-cache");
        if (e.retryAfterSeconds() > 0) {
            exchange.getResponseHeaders().put(Headers.RETRY_AFTER, Integer.toString(e.retryAfterSeconds()));
        }
        ByteBuffer retry = sseRetry(retryAfterSeconds);
        ByteBuffer frame = encoder.error(e.status(), WatchEventEncodings.SSE);
        ByteBuffer body = ByteBuffer.allocate(retry.remaining() + frame.remaining());
        body.put(retry).put(frame.duplicate()).flip();
        exchange.getResponseSender().send(body);
    }

    private static boolean acceptsEventStream(HttpServerExchange exchange) {
        try {
            return AcceptHeader.negotiate(exchange.getRequestHeaders().getFirst(Headers.ACCEPT), true)
                    == WatchEventEncodings.SSE;
        } catch (ApiException notAcceptable) {
            return false;
        }
    }

    /**
     * The block that opens every event stream, {@code retry: <ms>} and a blank line: how long an
     * {@code EventSource} waits before it reconnects after the stream ends (browsers default to
     * about 3 s; the node asks for its {@code Retry-After}). The block dispatches no event.
     */
    static ByteBuffer sseRetry(int retryAfterSeconds) {
        return ByteBuffer.wrap(("retry: " + retryAfterSeconds * 1000L + "\n\n").getBytes(StandardCharsets.US_ASCII));
    }
}
