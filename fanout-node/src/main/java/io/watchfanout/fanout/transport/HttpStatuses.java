package io.watchfanout.fanout.transport;

import io.watchfanout.fanout.watch.Statuses;
import io.watchfanout.schema.v1.Status;

/**
 * The {@code Status} shapes of a request's own faults on the HTTP port (README.md, "The watch
 * protocol", errors), named as Kubernetes' {@code metav1.StatusReason}s; the core's refusals
 * (410, 429, 503, 504) are {@link Statuses}'.
 */
public final class HttpStatuses {
    private HttpStatuses() {}

    /** 400 BadRequest: a malformed parameter. */
    public static Status badRequest(String message) {
        return Statuses.of(400, "BadRequest", message);
    }

    /** 401 Unauthorized: the request's credentials are missing or not accepted (README.md, "Security"). */
    public static Status unauthorized(String message) {
        return Statuses.of(401, "Unauthorized", message);
    }

    /** 403 Forbidden: the identity may not do this with this key range (README.md, "Security"). */
    public static Status forbidden(String message) {
        return Statuses.of(403, "Forbidden", message);
    }

    /** 404 NotFound: no such path. */
    public static Status notFound(String message) {
        return Statuses.of(404, "NotFound", message);
    }

    /** 405 MethodNotAllowed. */
    public static Status methodNotAllowed(String message) {
        return Statuses.of(405, "MethodNotAllowed", message);
    }

    /** 406 NotAcceptable: no supported encoding in {@code Accept}. */
    public static Status notAcceptable(String message) {
        return Statuses.of(406, "NotAcceptable", message);
    }
}
