package io.watchfanout.fanout.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.kubernetes.client.proto.V1Authorization;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.RequestAttributes;
import io.watchfanout.kube.codec.StoredObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The questions kubectl asks with a POST that writes nothing: {@code SelfSubjectAccessReview}
 * ({@code kubectl auth can-i}) and {@code SelfSubjectReview} ({@code kubectl auth whoami}),
 * answered from this node's own authenticator and authorizers, so that the answer is exactly what
 * the node enforces. Their answers have kube-apiserver's shape: the request's object with a
 * {@code status} ({@code allowed} and a {@code reason} when not; the {@code userInfo}), status 201.
 *
 * <p>A verb other than {@code get}, {@code list} or {@code watch} is never allowed here: the node
 * is a read-only tier, whatever kube-apiserver would say. Stateless and thread-safe; runs on a
 * worker thread per request, never per event.
 */
final class KubeReviews {
    /** Where {@code kubectl auth can-i} posts its question. */
    static final String ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    /** Where {@code kubectl auth whoami} posts its question. */
    static final String SUBJECT_REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    /** The largest review body read, in bytes; kube-apiserver's limit for any request is 3 MiB. */
    static final int MAX_BODY = 64 * 1024;

    private static final Set<String> READ_VERBS = Set.of("get", "list", "watch");

    /** Decides a question: null when allowed, else why not (empty when no reason is given). */
    @FunctionalInterface
    interface Decider {
        String denial(RequestAttributes request);
    }

    private KubeReviews() {}

    /** True when a POST to {@code path} is a review this node answers. */
    static boolean isReview(String path) {
        return ACCESS_REVIEWS.equals(path) || SUBJECT_REVIEWS.equals(path);
    }

    /**
     * The answer to the review posted to {@code path} by {@code identity}.
     *
     * @param body the request's JSON body
     * @throws KubeError 400 for a body that is not a JSON object of the path's kind, 422 for an
     *     access review without exactly one of {@code resourceAttributes} and {@code nonResourceAttributes}
     */
    static byte[] answer(String path, Identity identity, byte[] body, Decider decider) throws KubeError {
        String kind = path.equals(ACCESS_REVIEWS) ? "SelfSubjectAccessReview" : "SelfSubjectReview";
        StoredObject envelope = StoredObject.of(body, 0, body.length);
        // client-go posts built-in kinds as protobuf where its client is set to (kubectl's is).
        JsonObject review = envelope.isProtobuf() ? fromProtobuf(body, envelope, kind) : parse(body, kind);
        JsonObject status =
                path.equals(ACCESS_REVIEWS) ? accessStatus(identity, review, decider) : subjectStatus(identity);
        review.add("status", status);
        if (!review.has("metadata")) {
            review.add("metadata", new JsonObject());
        }
        return review.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The JSON form of a review posted as protobuf ({@code k8s\0} + {@code runtime.Unknown}): its spec. */
    private static JsonObject fromProtobuf(byte[] body, StoredObject envelope, String kind) throws KubeError {
        if (!envelope.kind().equals(kind)) {
            throw KubeError.badRequest("the body is a " + envelope.kind() + ", not a " + kind);
        }
        JsonObject review = new JsonObject();
        review.addProperty("kind", kind);
        review.addProperty("apiVersion", envelope.apiVersion());
        if (!kind.equals("SelfSubjectAccessReview")) {
            return review; // a SelfSubjectReview has no spec
        }
        V1Authorization.SelfSubjectAccessReviewSpec spec;
        try {
            spec = V1Authorization.SelfSubjectAccessReview.parseFrom(
                            ByteString.copyFrom(body, envelope.rawOffset(), envelope.rawLength()))
                    .getSpec();
        } catch (InvalidProtocolBufferException e) {
            throw KubeError.badRequest("the body is not a protobuf " + kind + ": " + e.getMessage());
        }
        JsonObject json = new JsonObject();
        if (spec.hasResourceAttributes()) {
            V1Authorization.ResourceAttributes r = spec.getResourceAttributes();
            JsonObject attributes = new JsonObject();
            attributes.addProperty("namespace", r.getNamespace());
            attributes.addProperty("verb", r.getVerb());
            attributes.addProperty("group", r.getGroup());
            attributes.addProperty("version", r.getVersion());
            attributes.addProperty("resource", r.getResource());
            attributes.addProperty("subresource", r.getSubresource());
            attributes.addProperty("name", r.getName());
            json.add("resourceAttributes", attributes);
        }
        if (spec.hasNonResourceAttributes()) {
            JsonObject attributes = new JsonObject();
            attributes.addProperty("path", spec.getNonResourceAttributes().getPath());
            attributes.addProperty("verb", spec.getNonResourceAttributes().getVerb());
            json.add("nonResourceAttributes", attributes);
        }
        review.add("spec", json);
        return review;
    }

    private static JsonObject parse(byte[] body, String kind) throws KubeError {
        JsonElement parsed;
        try {
            parsed = JsonParser.parseString(new String(body, StandardCharsets.UTF_8));
        } catch (JsonParseException e) {
            throw KubeError.badRequest("the body is not a JSON " + kind + ": " + e.getMessage());
        }
        if (!parsed.isJsonObject()) {
            throw KubeError.badRequest("the body is not a JSON " + kind);
        }
        JsonObject review = parsed.getAsJsonObject();
        String given = text(review, "kind");
        if (!given.isEmpty() && !given.equals(kind)) {
            throw KubeError.badRequest("the body is a " + given + ", not a " + kind);
        }
        return review;
    }

    private static JsonObject accessStatus(Identity identity, JsonObject review, Decider decider) throws KubeError {
        JsonObject spec = review.has("spec") && review.get("spec").isJsonObject()
                ? review.getAsJsonObject("spec")
                : new JsonObject();
        JsonObject resource = object(spec, "resourceAttributes");
        JsonObject nonResource = object(spec, "nonResourceAttributes");
        if ((resource == null) == (nonResource == null)) {
            throw KubeError.of(
                    422,
                    "Invalid",
                    "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid "
                            + "value: exactly one of nonResourceAttributes or resourceAttributes must be specified");
        }
        List<String> groups = new ArrayList<>(identity.groups());
        RequestAttributes request = resource != null
                ? new RequestAttributes(
                        identity.name(),
                        groups,
                        text(resource, "verb"),
                        text(resource, "group"),
                        text(resource, "resource"),
                        text(resource, "subresource"),
                        text(resource, "namespace"),
                        text(resource, "name"),
                        "",
                        true)
                : new RequestAttributes(
                        identity.name(),
                        groups,
                        text(nonResource, "verb"),
                        "",
                        "",
                        "",
                        "",
                        "",
                        text(nonResource, "path"),
                        false);
        String denial = READ_VERBS.contains(request.verb())
                ? decider.denial(request)
                : "this node is a read-only tier of the Kubernetes API (get, list, watch): " + request.verb()
                        + " is never allowed here; kube-apiserver decides writes";
        JsonObject status = new JsonObject();
        status.addProperty("allowed", denial == null);
        if (denial != null && !denial.isEmpty()) {
            status.addProperty("reason", denial);
        }
        return status;
    }

    private static JsonObject subjectStatus(Identity identity) {
        JsonObject user = new JsonObject();
        user.addProperty("username", identity.name());
        com.google.gson.JsonArray groups = new com.google.gson.JsonArray();
        identity.groups().forEach(groups::add);
        user.add("groups", groups);
        JsonObject status = new JsonObject();
        status.add("userInfo", user);
        return status;
    }

    private static JsonObject object(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : null;
    }

    private static String text(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }
}
