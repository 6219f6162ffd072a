package io.watchfanout.fanout.http;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.fanout.frame.ProtoJson;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;

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
    byte[] line = java.util.Arrays.copyOf(body, body.length + 1);
    line[body.length] = '\n';
    exchange.getResponseSender().send(ByteBuffer.wrap(line));
  }

  static void error(HttpServerExchange exchange, ApiException e) {
    status(exchange, e.status(), e.retryAfterSeconds());
  }

  /** Answers 200 with a body of the given content type. */
  static void ok(HttpServerExchange exchange, String contentType, byte[] body) {
    exchange.setStatusCode(200);
    exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
    exchange.getResponseSender().send(ByteBuffer.wrap(body));
  }
}
