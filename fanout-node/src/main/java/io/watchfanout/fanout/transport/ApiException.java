package io.watchfanout.fanout.transport;

import io.watchfanout.schema.v1.Status;

/**
 * A request that is answered with an error {@code Status} before any streaming starts.
 * {@code retryAfterSeconds > 0} adds a {@code Retry-After} header (503, 504). Public for the
 * front ends mounted on the HTTP port ({@link HttpApi#mount}): {@code /v1} answers its refusals
 * so, the others read the refusals of the transport's shared parts ({@link QueryParams}) and
 * answer them in their own forms.
 */
public final class ApiException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Status status;
    private final int retryAfterSeconds;

    /** A refusal with {@code status} and no {@code Retry-After}. */
    public ApiException(Status status) {
        this(status, 0);
    }

    /** A refusal with {@code status}, and {@code Retry-After: retryAfterSeconds} when that is {@code > 0}. */
    public ApiException(Status status, int retryAfterSeconds) {
        super(status.getMessage(), null, false, false);
        this.status = status;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    /** The refusal: HTTP code, reason and message. */
    public Status status() {
        return status;
    }

    /** The {@code Retry-After} to send, in seconds; 0 for none. */
    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
