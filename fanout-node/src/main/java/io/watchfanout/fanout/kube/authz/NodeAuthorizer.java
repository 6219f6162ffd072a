package io.watchfanout.fanout.kube.authz;

import io.watchfanout.fanout.security.RequestAttributes;
import java.util.Set;

/**
 * kube-apiserver's Node authorizer for the read verbs (plugin/pkg/auth/authorizer/node): a
 * kubelet, user {@code system:node:<name>} in the group {@code system:nodes}, may read its own
 * Node, the pods bound to it (by name, or a list or watch with the field selector
 * {@code spec.nodeName=<name>}), the Secrets, ConfigMaps and PersistentVolumeClaims those pods
 * reference ({@link NodeGraph}), and its Lease in {@code kube-node-lease}. Anything else, and any
 * other user, gets no opinion: the next mode (RBAC) decides, as with
 * {@code --authorization-mode=Node,RBAC}.
 *
 * <p>Thread-safe; reads the graph when a request or watch starts.
 */
public final class NodeAuthorizer {
    private static final String NODE_PREFIX = "system:node:";
    private static final Set<String> READ = Set.of("get", "list", "watch");

    /** A decision: allowed, or no opinion (the next authorizer decides). */
    public enum Decision {
        ALLOW,
        NO_OPINION
    }

    private final NodeGraph graph;

    /** An authorizer over {@code graph}. */
    public NodeAuthorizer(NodeGraph graph) {
        this.graph = graph;
    }

    /**
     * Decides a request.
     *
     * @param nodeNameSelector the {@code spec.nodeName} a pod list or watch selects on ({@code =}),
     *     or null
     */
    public Decision decide(RequestAttributes r, String nodeNameSelector) {
        if (!r.user().startsWith(NODE_PREFIX) || !r.groups().contains("system:nodes") || !r.resourceRequest()) {
            return Decision.NO_OPINION;
        }
        String node = r.user().substring(NODE_PREFIX.length());
        if (node.isEmpty() || !READ.contains(r.verb())) {
            return Decision.NO_OPINION;
        }
        boolean whole = r.subresource().isEmpty();
        boolean allowed = switch (r.apiGroup() + "/" + r.resource()) {
            case "/nodes" -> (whole || r.subresource().equals("status")) && node.equals(r.name());
            case "/pods" ->
                (whole || r.subresource().equals("status"))
                        && (r.name().isEmpty()
                                ? node.equals(nodeNameSelector)
                                : graph.linked(node, "pods", r.namespace(), r.name()));
            case "/secrets", "/configmaps", "/persistentvolumeclaims" ->
                whole && !r.name().isEmpty() && graph.linked(node, r.resource(), r.namespace(), r.name());
            case "coordination.k8s.io/leases" ->
                whole && r.namespace().equals("kube-node-lease") && node.equals(r.name());
            default -> false;
        };
        return allowed ? Decision.ALLOW : Decision.NO_OPINION;
    }

    /**
     * Why the Node authorizer did not allow {@code r}, in kube-apiserver's words, or null when it
     * has nothing to say (not a node, or not a resource it decides).
     */
    public String reason(RequestAttributes r) {
        if (!r.user().startsWith(NODE_PREFIX) || !r.groups().contains("system:nodes") || !r.resourceRequest()) {
            return null;
        }
        String node = r.user().substring(NODE_PREFIX.length());
        return switch (r.apiGroup() + "/" + r.resource()) {
            case "/pods" ->
                r.name().isEmpty() ? null : "no relationship found between node '" + node + "' and this object";
            case "/secrets", "/configmaps", "/persistentvolumeclaims" ->
                r.name().isEmpty()
                        ? "can only " + r.verb() + " individual resources of this type"
                        : "no relationship found between node '" + node + "' and this object";
            default -> null;
        };
    }
}
