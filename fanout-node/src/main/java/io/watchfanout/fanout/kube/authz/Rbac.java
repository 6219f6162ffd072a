package io.watchfanout.fanout.kube.authz;

import io.watchfanout.fanout.security.RequestAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kubernetes RBAC decisions from a snapshot of Roles, ClusterRoles, RoleBindings and
 * ClusterRoleBindings, with kube-apiserver's rules (plugin/pkg/auth/authorizer/rbac and
 * rbac/v1 helpers): a request is allowed when a ClusterRoleBinding, or a RoleBinding in the
 * request's namespace, binds one of its subjects (the user, one of its groups, or for
 * {@code system:serviceaccount:<ns>:<name>} the ServiceAccount) to a role one of whose rules covers
 * it. A rule covers a resource request when its verbs, API groups and resources match (a star
 * for any, a star before {@code /subresource} for that subresource of any resource), and its resourceNames, if any, hold the name; a
 * non-resource request when its nonResourceURLs hold the path or a prefix of it ending in
 * {@code *}. RBAC only allows; what no rule allows is denied, with kube-apiserver's message.
 *
 * <p>Immutable and thread-safe: a policy change makes a new snapshot. Bindings are indexed by
 * subject, so a decision looks only at the bindings of the requester's user and groups.
 */
public final class Rbac {
    /** One rule of a Role or ClusterRole. */
    public record Rule(
            Set<String> verbs,
            Set<String> apiGroups,
            Set<String> resources,
            Set<String> resourceNames,
            Set<String> nonResourceURLs) {}

    /** A subject of a binding: kind {@code User}, {@code Group} or {@code ServiceAccount}. */
    public record Subject(String kind, String name, String namespace) {}

    /**
     * A RoleBinding ({@code namespace} set) or ClusterRoleBinding ({@code namespace} empty) of
     * {@code subjects} to the {@code Role} or {@code ClusterRole} {@code roleName}.
     */
    public record Binding(String namespace, String name, String roleKind, String roleName, List<Subject> subjects) {}

    private final Map<String, List<Rule>> clusterRoles;
    private final Map<String, List<Rule>> roles; // "<namespace>/<name>"
    private final Map<String, List<Binding>> bySubject = new HashMap<>();

    /**
     * A snapshot.
     *
     * @param clusterRoles ClusterRoles by name (aggregated ones with the rules the controller wrote)
     * @param roles Roles by {@code <namespace>/<name>}
     * @param bindings every RoleBinding and ClusterRoleBinding
     */
    public Rbac(Map<String, List<Rule>> clusterRoles, Map<String, List<Rule>> roles, List<Binding> bindings) {
        this.clusterRoles = Map.copyOf(clusterRoles);
        this.roles = Map.copyOf(roles);
        for (Binding b : bindings) {
            for (Subject s : b.subjects()) {
                String key = subjectKey(s, b.namespace());
                if (key != null) {
                    bySubject.computeIfAbsent(key, k -> new ArrayList<>()).add(b);
                }
            }
        }
    }

    /** True when some binding of the requester allows the request. */
    public boolean allows(RequestAttributes r) {
        if (allowsThrough(bySubject.get("User:" + r.user()), r)) {
            return true;
        }
        for (String group : r.groups()) {
            if (allowsThrough(bySubject.get("Group:" + group), r)) {
                return true;
            }
        }
        return false;
    }

    /**
     * kube-apiserver's 403 message for a denied request, e.g. {@code User "jane" cannot list
     * resource "secrets" in API group "" in the namespace "prod"}.
     */
    public static String denial(RequestAttributes r) {
        if (!r.resourceRequest()) {
            return "User \"" + r.user() + "\" cannot " + r.verb() + " path \"" + r.path() + "\"";
        }
        String resource = r.subresource().isEmpty() ? r.resource() : r.resource() + "/" + r.subresource();
        String scope = r.namespace().isEmpty() ? "at the cluster scope" : "in the namespace \"" + r.namespace() + "\"";
        return "User \"" + r.user() + "\" cannot " + r.verb() + " resource \"" + resource + "\" in API group \""
                + r.apiGroup() + "\" " + scope;
    }

    private boolean allowsThrough(List<Binding> bindings, RequestAttributes r) {
        if (bindings == null) {
            return false;
        }
        for (Binding b : bindings) {
            // A RoleBinding grants only in its namespace; a ClusterRoleBinding everywhere.
            if (!b.namespace().isEmpty() && !b.namespace().equals(r.namespace())) {
                continue;
            }
            List<Rule> rules = b.roleKind().equals("ClusterRole")
                    ? clusterRoles.get(b.roleName())
                    : b.namespace().isEmpty() ? null : roles.get(b.namespace() + "/" + b.roleName());
            if (rules == null) {
                continue;
            }
            for (Rule rule : rules) {
                if (covers(rule, r)) {
                    return true;
                }
            }
        }
        return false;
    }

    static boolean covers(Rule rule, RequestAttributes r) {
        if (!has(rule.verbs(), r.verb())) {
            return false;
        }
        if (!r.resourceRequest()) {
            for (String url : rule.nonResourceURLs()) {
                if (url.equals("*")
                        || url.equals(r.path())
                        || (url.endsWith("*") && r.path().startsWith(url.substring(0, url.length() - 1)))) {
                    return true;
                }
            }
            return false;
        }
        if (!has(rule.apiGroups(), r.apiGroup())) {
            return false;
        }
        if (!resourceMatches(rule.resources(), r.resource(), r.subresource())) {
            return false;
        }
        return rule.resourceNames().isEmpty()
                || (!r.name().isEmpty() && rule.resourceNames().contains(r.name()));
    }

    private static boolean resourceMatches(Set<String> resources, String resource, String subresource) {
        String combined = subresource.isEmpty() ? resource : resource + "/" + subresource;
        for (String rr : resources) {
            if (rr.equals("*") || rr.equals(combined)) {
                return true;
            }
            if (!subresource.isEmpty() && rr.equals("*/" + subresource)) {
                return true;
            }
        }
        return false;
    }

    private static boolean has(Set<String> values, String value) {
        return values.contains("*") || values.contains(value);
    }

    /**
     * The index key of a subject: users and groups by name; a ServiceAccount as the user
     * {@code system:serviceaccount:<ns>:<name>} (its namespace defaulting to the binding's).
     */
    private static String subjectKey(Subject s, String bindingNamespace) {
        return switch (s.kind()) {
            case "User" -> "User:" + s.name();
            case "Group" -> "Group:" + s.name();
            case "ServiceAccount" -> {
                String ns = s.namespace() == null || s.namespace().isEmpty() ? bindingNamespace : s.namespace();
                yield ns.isEmpty() ? null : "User:system:serviceaccount:" + ns + ":" + s.name();
            }
            default -> null;
        };
    }
}
