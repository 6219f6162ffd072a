package io.watchfanout.fanout.http;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.ProtoJson;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Writes complete (non-streaming) responses. */
final class Responses {
    private Responses() {}

    /** Answers with {@code status} as a JSON {@code Status} body and its HTTP code. */
    static void status(HttpServerExchange exchange, Status status, int retryAfterSeconds) {
        exchange.setStatusCode(status.getCode());
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
        if (retryAfterSeconds > 0) {
            exchange.getResponseHeaders().put(Headers.RETRY_AFTER, Integer.toString(retryAfterSeconds));
        }
        byte[] body = ProtoJson.toJson(status);
        byte[] line = Arrays.copyOf(body, body.length + 1);
        line[body.length] = '\n';
        exchange.getResponseSender().send(ByteBuffer.wrap(line));
    }

    static void error(HttpServerExchange exchange, ApiException e) {
        status(exchange, e.status(), e.retryAfterSeconds());
    }

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
            error(exchange, e);
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

    /** Answers 200 with a body of the given content type. */
    static void ok(HttpServerExchange exchange, String contentType, byte[] body) {
        exchange.setStatusCode(200);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
        exchange.getResponseSender().send(ByteBuffer.wrap(body));
    }
}
