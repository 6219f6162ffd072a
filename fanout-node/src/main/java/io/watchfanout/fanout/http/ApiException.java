package io.watchfanout.fanout.http;

import io.watchfanout.fanout.watch.Statuses;
import io.watchfanout.schema.v1.Status;
import java.time.Duration;

/**
 * A request that is answered with an error {@code Status} before any streaming starts.
 * {@code retryAfterSeconds > 0} adds a {@code Retry-After} header (503, 504). Public so that a
 * front end mounted on the HTTP port ({@link HttpApi#mount}) can read the refusals of the
 * transport's shared parts ({@link QueryParams}) and answer them in its own form.
 */
public final class ApiException extends Exception {
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

    /**
     * 504 Timeout with {@code Retry-After}: the node did not reach a requested resourceVersion
     * within the bounded wait (README.md, "The watch protocol", errors).
     */
    static ApiException notCaughtUp(long resourceVersion, long nodeRevision, Duration waited, int retryAfterSeconds) {
        return new ApiException(
                Statuses.timeout("resourceVersion " + resourceVersion + " is ahead of this node (at revision "
                        + nodeRevision + ") and it did not catch up within " + waited.toMillis()
                        + " ms; retry, or ask another node"),
                retryAfterSeconds);
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
