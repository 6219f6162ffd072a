package io.watchfanout.fanout.watch;

import io.watchfanout.schema.v1.Status;

/**
 * The {@code Status} shapes of the API (README.md, "The watch protocol", errors), named as Kubernetes'
 * {@code metav1.StatusReason}s so that its clients react the same way (410 Expired: list again).
 */
public final class Statuses {
    private Statuses() {}

    /** 400 BadRequest: a malformed parameter. */
    public static Status badRequest(String message) {
        return of(400, "BadRequest", message);
    }

    /** 401 Unauthorized: the request's credentials are missing or not accepted (README.md, "Security"). */
    public static Status unauthorized(String message) {
        return of(401, "Unauthorized", message);
    }

    /** 403 Forbidden: the identity may not do this with this key range (README.md, "Security"). */
    public static Status forbidden(String message) {
        return of(403, "Forbidden", message);
    }

    /** 404 NotFound: no such path. */
    public static Status notFound(String message) {
        return of(404, "NotFound", message);
    }

    /** 405 MethodNotAllowed. */
    public static Status methodNotAllowed(String message) {
        return of(405, "MethodNotAllowed", message);
    }

    /** 406 NotAcceptable: no supported encoding in {@code Accept}. */
    public static Status notAcceptable(String message) {
        return of(406, "NotAcceptable", message);
    }

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
