package io.watchfanout.fanout.transport;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.fanout.frame.ProtoJson;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;
import java.util.Arrays;

/** Writes complete (non-streaming) responses, for the transport and the front ends on it. */
public final class Responses {
    private Responses() {}

    /** Answers with {@code status} as a JSON {@code Status} body and its HTTP code. */
    public static void status(HttpServerExchange exchange, Status status, int retryAfterSeconds) {
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

    /** Answers {@code e}'s {@code Status}, with its {@code Retry-After} when it has one. */
    public static void error(HttpServerExchange exchange, ApiException e) {
        status(exchange, e.status(), e.retryAfterSeconds());
    }

    /** Answers 404 for a path no front end serves, naming the node's own paths. */
    public static void noSuchPath(HttpServerExchange exchange, String path) {
        status(
                exchange,
                HttpStatuses.notFound(
                        "no such path: " + path + " (expected: /v1/watch, /v1/kv, /readyz, /livez or /metrics)"),
                0);
    }

    /** Answers 200 with a body of the given content type. */
    public static void ok(HttpServerExchange exchange, String contentType, byte[] body) {
        exchange.setStatusCode(200);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
        exchange.getResponseSender().send(ByteBuffer.wrap(body));
    }
}
