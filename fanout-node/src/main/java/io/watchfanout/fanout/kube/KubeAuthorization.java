package io.watchfanout.fanout.kube;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.kube.authz.KubernetesAuthorizer;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessDeniedException;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.LimitExceededException;
import io.watchfanout.fanout.security.RequestAttributes;
import io.watchfanout.fanout.security.WatchAuthorization;
import io.watchfanout.fanout.security.WatchGrant;
import java.util.ArrayList;
import java.util.List;

/**
 * The Kubernetes API's authorization with kube-apiserver's {@code --authorization-mode}
 * ({@link KubernetesAuthorizer}: Node, RBAC, AlwaysAllow over the cache's objects,
 * {@link KubeObjects}): the attributes kube-apiserver's request info derives from a request
 * (verb {@code get}, {@code list} or {@code watch}; API group, resource, subresource, namespace;
 * the name from the path or, for a list or watch, from a {@code metadata.name=} field selector;
 * discovery and {@code /version} as non-resource paths), decided when the request or watch
 * starts, and a watch decided again whenever the policy changes: one no longer allowed ends with
 * a 403 ERROR event ({@link AccessControl#recheckKubernetesWatches}). Refusals are 403
 * {@code Status} objects in kube-apiserver's words, counted and audited.
 *
 * <p>Thread-safe.
 */
final class KubeAuthorization {
    private final AccessControl access;
    private final KubernetesAuthorizer authorizer;
    private final Runnable readPolicy;

    /** @param readPolicy reads the policy objects if they were never read (the first request once the node serves) */
    KubeAuthorization(AccessControl access, KubernetesAuthorizer authorizer, Runnable readPolicy) {
        this.access = access;
        this.authorizer = authorizer;
        this.readPolicy = readPolicy;
    }

    /**
     * Checks a request for a non-resource path (discovery, {@code /version}) with verb {@code get}.
     *
     * @throws KubeError 403 {@code forbidden: User "x" cannot get path "/apis"}
     */
    void nonResource(Identity identity, String path, String api) throws KubeError {
        RequestAttributes r =
                new RequestAttributes(identity.name(), groups(identity), "get", "", "", "", "", "", path, false);
        decide(identity, r, null, api);
    }

    /**
     * Checks a get ({@link KubePath.Target#OBJECT}) or list of {@code p}.
     *
     * @throws KubeError 403
     */
    void read(Identity identity, KubePath p, KubeListOptions q, String api) throws KubeError {
        String verb = p.target() == KubePath.Target.OBJECT ? "get" : "list";
        decide(identity, request(identity, p, verb, q), nodeName(p, q), api);
    }

    /**
     * Checks a watch of {@code p}: the decision, kept to be taken again on every policy change, for
     * {@link #admit} once the watch's parameters are checked.
     *
     * @throws KubeError 403 when not allowed
     */
    WatchAuthorization watch(Identity identity, KubePath p, KubeListOptions q, String api) throws KubeError {
        RequestAttributes r = request(identity, p, "watch", q);
        String node = nodeName(p, q);
        decide(identity, r, node, api);
        return new WatchAuthorization() {
            @Override
            public RequestAttributes request() {
                return r;
            }

            @Override
            public String recheck() {
                String why = authorizer.denial(r, node);
                return why == null ? null : KubeError.forbiddenMessage(r.apiGroup(), r.resource(), r.name(), why);
            }
        };
    }

    /**
     * Admits a watch {@link #watch} allowed with the node's limits; the grant carries the decision.
     *
     * @throws KubeError 429 at a watch limit
     */
    WatchGrant admit(Identity identity, KeyRange range, WatchAuthorization authorization, String api) throws KubeError {
        try {
            return access.admitWatch(identity, range, api, authorization);
        } catch (LimitExceededException e) {
            throw KubeError.of(429, "TooManyRequests", e.getMessage());
        } catch (AccessDeniedException e) {
            throw KubeError.of(403, "Forbidden", e.getMessage());
        }
    }

    /**
     * The authorizers' answer to {@code r} without refusing anything (an access review's question):
     * null when allowed, else the reasons they gave (empty when none did, as RBAC gives none).
     */
    String reviewReason(RequestAttributes r) {
        readPolicy.run();
        return authorizer.reviewReason(r);
    }

    private void decide(Identity identity, RequestAttributes r, String nodeName, String api) throws KubeError {
        readPolicy.run();
        String why = authorizer.denial(r, nodeName);
        if (why != null) {
            access.deniedKubernetes(identity, api, r, why);
            throw KubeError.forbidden(r.apiGroup(), r.resource(), r.name(), why);
        }
    }

    /** kube-apiserver's request info of a resource request. */
    private static RequestAttributes request(Identity identity, KubePath p, String verb, KubeListOptions q) {
        String name = p.name();
        if (name.isEmpty()) {
            // A list or watch of one object by its name is authorized as that object (resourceNames).
            String selected = q.selected("metadata.name");
            name = selected == null ? "" : selected;
        }
        return new RequestAttributes(
                identity.name(),
                groups(identity),
                verb,
                p.resource().group(),
                p.resource().plural(),
                p.subresource(),
                p.namespace(),
                name,
                "",
                true);
    }

    /** The node a pod list or watch selects with {@code spec.nodeName=}, for the Node authorizer; or null. */
    private static String nodeName(KubePath p, KubeListOptions q) {
        return p.resource().group().isEmpty() && p.resource().plural().equals("pods")
                ? q.selected("spec.nodeName")
                : null;
    }

    private static List<String> groups(Identity identity) {
        return new ArrayList<>(identity.groups());
    }
}
