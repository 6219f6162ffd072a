package io.watchfanout.fanout.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.watchfanout.kube.codec.resources.KubeResource;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A Kubernetes API request refused before its answer starts, carried to the one place that
 * writes it: a {@code meta.k8s.io/v1} {@code Status} in kube-apiserver's shape
 * ({@code {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message",
 * "reason","details","code"}}), the HTTP code its {@code code}, as client-go's
 * {@code errors.FromObject} reads it. The factories below use kube-apiserver's reasons and, where
 * a client may match on it, its message text (k8s.io/apimachinery {@code api/errors}).
 */
final class KubeError extends Exception {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final String reason;
    private final transient JsonObject details;
    private final int retryAfterSeconds;
    private final String continueToken;

    private KubeError(
            int code, String reason, String message, JsonObject details, int retryAfterSeconds, String continueToken) {
        super(message, null, false, false);
        this.code = code;
        this.reason = reason;
        this.details = details;
        this.retryAfterSeconds = retryAfterSeconds;
        this.continueToken = continueToken;
    }

    /** A refusal with no details. */
    static KubeError of(int code, String reason, String message) {
        return new KubeError(code, reason, message, null, 0, null);
    }

    /** 400 BadRequest. */
    static KubeError badRequest(String message) {
        return of(400, "BadRequest", message);
    }

    /**
     * 422 Invalid of the request's {@code ListOptions}, as kube-apiserver's validation words it:
     * {@code ListOptions.meta.k8s.io "" is invalid: <errors>}.
     */
    static KubeError invalidListOptions(List<String> errors) {
        String joined = errors.size() == 1 ? errors.get(0) : "[" + String.join(", ", errors) + "]";
        JsonObject details = new JsonObject();
        details.addProperty("group", "meta.k8s.io");
        details.addProperty("kind", "ListOptions");
        return new KubeError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: " + joined, details, 0, null);
    }

    /**
     * 403 Forbidden as kube-apiserver's {@code NewForbidden} words it: {@code secrets "x" is
     * forbidden: <why>}, {@code secrets is forbidden: <why>} for a collection, {@code forbidden:
     * <why>} for a path that names no resource; details naming the group, resource and object.
     */
    static KubeError forbidden(String group, String resource, String name, String why) {
        JsonObject details = new JsonObject();
        if (!name.isEmpty()) {
            details.addProperty("name", name);
        }
        if (!group.isEmpty()) {
            details.addProperty("group", group);
        }
        if (!resource.isEmpty()) {
            details.addProperty("kind", resource);
        }
        return new KubeError(403, "Forbidden", forbiddenMessage(group, resource, name, why), details, 0, null);
    }

    /** The message of {@link #forbidden}. */
    static String forbiddenMessage(String group, String resource, String name, String why) {
        if (resource.isEmpty()) {
            return "forbidden: " + why;
        }
        String qualified = group.isEmpty() ? resource : resource + "." + group;
        return name.isEmpty()
                ? qualified + " is forbidden: " + why
                : qualified + " \"" + name + "\" is forbidden: " + why;
    }

    /** 404 NotFound of one object: {@code pods "web-0" not found}, details naming it. */
    static KubeError objectNotFound(KubeResource resource, String name) {
        JsonObject details = new JsonObject();
        details.addProperty("name", name);
        if (!resource.group().isEmpty()) {
            details.addProperty("group", resource.group());
        }
        details.addProperty("kind", resource.plural());
        String what = resource.group().isEmpty() ? resource.plural() : resource.plural() + "." + resource.group();
        return new KubeError(404, "NotFound", what + " \"" + name + "\" not found", details, 0, null);
    }

    /** 404 NotFound of a path the API does not serve, in kube-apiserver's words. */
    static KubeError pathNotFound() {
        return new KubeError(
                404, "NotFound", "the server could not find the requested resource", new JsonObject(), 0, null);
    }

    /**
     * 404 NotFound of a subresource this node does not serve ({@code pods/log}, {@code pods/exec},
     * {@code deployments/scale}, proxies), in kube-apiserver's words and then where to go: those
     * reach kubelets or controllers through kube-apiserver, which this read-only tier of stored
     * objects is not.
     */
    static KubeError subresourceNotServed(KubeResource resource, String subresource) {
        String what = resource.group().isEmpty() ? resource.plural() : resource.plural() + "." + resource.group();
        JsonObject details = new JsonObject();
        details.addProperty("group", resource.group());
        details.addProperty("kind", resource.plural() + "/" + subresource);
        return new KubeError(
                404,
                "NotFound",
                "the server could not find the requested resource: this node serves the stored objects of " + what
                        + " and their status only, not " + resource.plural() + "/" + subresource
                        + " (logs, exec, attach, port-forward, proxies and scale go through kube-apiserver); ask "
                        + "kube-apiserver",
                details,
                0,
                null);
    }

    /** 410 Expired, optionally with a {@code metadata.continue} that continues the list inconsistently. */
    static KubeError expired(String message, String continueToken) {
        return new KubeError(410, "Expired", message, null, 0, continueToken);
    }

    /**
     * 504 Timeout for a resourceVersion the node has not reached, as kube-apiserver's watch cache
     * answers it: {@code Too large resource version: N, current: M}, cause
     * {@code ResourceVersionTooLarge}, {@code retryAfterSeconds} in the details and the header.
     */
    static KubeError tooLargeResourceVersion(long requested, long current, int retryAfterSeconds) {
        JsonObject details = new JsonObject();
        JsonArray causes = new JsonArray();
        JsonObject cause = new JsonObject();
        cause.addProperty("reason", "ResourceVersionTooLarge");
        cause.addProperty("message", "Too large resource version");
        causes.add(cause);
        details.add("causes", causes);
        details.addProperty("retryAfterSeconds", retryAfterSeconds);
        return new KubeError(
                504,
                "Timeout",
                "Too large resource version: " + requested + ", current: " + current,
                details,
                retryAfterSeconds,
                null);
    }

    /** 503 ServiceUnavailable with {@code Retry-After}: the node cannot serve reads now. */
    static KubeError unavailable(String message, int retryAfterSeconds) {
        JsonObject details = new JsonObject();
        details.addProperty("retryAfterSeconds", retryAfterSeconds);
        return new KubeError(503, "ServiceUnavailable", message, details, retryAfterSeconds, null);
    }

    /** 500 InternalError: a stored object the node cannot decode, named by its key. */
    static KubeError undecodable(String key, String why) {
        return of(500, "InternalError", "unable to decode an object from etcd key \"" + key + "\": " + why);
    }

    int code() {
        return code;
    }

    /** The {@code Retry-After} header's seconds, 0 for none. */
    int retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** The {@code Status} body, one JSON object. */
    byte[] statusJson() {
        JsonObject status = new JsonObject();
        status.addProperty("kind", "Status");
        status.addProperty("apiVersion", "v1");
        JsonObject meta = new JsonObject();
        if (continueToken != null) {
            meta.addProperty("continue", continueToken);
        }
        status.add("metadata", meta);
        status.addProperty("status", "Failure");
        status.addProperty("message", getMessage());
        status.addProperty("reason", reason);
        if (details != null) {
            status.add("details", details);
        }
        status.addProperty("code", code);
        return status.toString().getBytes(StandardCharsets.UTF_8);
    }
}
