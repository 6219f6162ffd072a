package io.watchfanout.fanout.http;

import io.watchfanout.schema.v1.Status;

/**
 * A request that is answered with an error {@code Status} before any streaming starts.
 * {@code retryAfterSeconds > 0} adds a {@code Retry-After} header (503, 504).
 */
final class ApiException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Status status;
    private final int retryAfterSeconds;

    ApiException(Status status) {
        this(status, 0);
    }

    ApiException(Status status, int retryAfterSeconds) {
        super(status.getMessage(), null, false, false);
        this.status = status;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    Status status() {
        return status;
    }

    int retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
