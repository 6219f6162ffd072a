package io.watchfanout.fanout.watch;

import io.watchfanout.schema.v1.Status;

/**
 * The {@code Status} shapes of the core's own refusals and ERROR frames (README.md, "The watch
 * protocol", errors), named as Kubernetes' {@code metav1.StatusReason}s so that its clients react
 * the same way (410 Expired: list again). A request's own faults (400, 401, 403, 404, 405, 406) are
 * the HTTP transport's ({@code HttpStatuses}): the core knows no request.
 */
public final class Statuses {
    private Statuses() {}

    /** 410 Expired: the requested revision is older than the history this node holds. */
    public static Status expired(String message) {
        return of(410, "Expired", message);
    }

    /** 503 NotReady: the cache is rebuilding, or stopped on bad data. */
    public static Status notReady(String message) {
        return of(503, "NotReady", message);
    }

    /** 504 Timeout: the node did not reach the requested revision in time. */
    public static Status timeout(String message) {
        return of(504, "Timeout", message);
    }

    /** 429 TooManyRequests: a limit of the node is reached; retry later or on another node. */
    public static Status tooManyRequests(String message) {
        return of(429, "TooManyRequests", message);
    }

    /** 503 ServiceUnavailable: a read this watch needed failed; retry, here or on another node. */
    public static Status unavailable(String message) {
        return of(503, "ServiceUnavailable", message);
    }

    /** A status with the given code, reason and message. */
    public static Status of(int code, String reason, String message) {
        return Status.newBuilder()
                .setCode(code)
                .setReason(reason)
                .setMessage(message)
                .build();
    }
}
