package io.watchfanout.fanout.kube.authz;

import io.watchfanout.fanout.security.RequestAttributes;
import io.watchfanout.fanout.security.SecurityConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * kube-apiserver's {@code --authorization-mode}: its authorizers asked in the given order, the
 * first to allow deciding (k8s.io/apiserver {@code authorizer/union}); {@code Node}
 * ({@link NodeAuthorizer}), {@code RBAC} ({@link Rbac}), {@code AlwaysAllow}, {@code AlwaysDeny}.
 * What none allows is denied with kube-apiserver's message ({@link Rbac#denial}) and the reasons
 * the authorizers gave, joined by {@code ", "} after {@code ": "}, as its 403 says them.
 *
 * <p>Thread-safe: reads the current RBAC snapshot and the Node authorizer's graph; decisions run
 * when a request or watch starts and when the policy changes, never per event.
 */
public final class KubernetesAuthorizer {
    private final List<String> modes;
    private final Supplier<Rbac> rbac;
    private final NodeAuthorizer node;

    /**
     * @param modes the modes in order, each one of {@link SecurityConfig#AUTHORIZATION_MODES}
     * @param rbac the RBAC snapshot now in force
     * @param node the Node authorizer
     * @throws IllegalArgumentException for an unknown mode
     */
    public KubernetesAuthorizer(List<String> modes, Supplier<Rbac> rbac, NodeAuthorizer node) {
        for (String m : modes) {
            if (!SecurityConfig.AUTHORIZATION_MODES.contains(m)) {
                throw new IllegalArgumentException("unknown authorization mode " + m);
            }
        }
        this.modes = List.copyOf(modes);
        this.rbac = rbac;
        this.node = node;
    }

    /** The modes, in order. */
    public List<String> modes() {
        return modes;
    }

    /**
     * Decides {@code r}.
     *
     * @param nodeNameSelector the {@code spec.nodeName} a pod list or watch selects ({@code =}), or null
     * @return null when allowed; otherwise kube-apiserver's 403 message
     */
    public String denial(RequestAttributes r, String nodeNameSelector) {
        List<String> reasons = reasons(r, nodeNameSelector);
        if (reasons == null) {
            return null;
        }
        String message = Rbac.denial(r);
        return reasons.isEmpty() ? message : message + ": " + String.join(", ", reasons);
    }

    /**
     * Decides {@code r} as an access review reports it: null when allowed; otherwise the reasons
     * the authorizers gave, joined by {@code ", "}, empty when none gave one (RBAC gives none, as
     * kube-apiserver's {@code SelfSubjectAccessReview} then has no {@code reason}).
     */
    public String reviewReason(RequestAttributes r) {
        List<String> reasons = reasons(r, null);
        return reasons == null ? null : String.join(", ", reasons);
    }

    /** Null when a mode allows {@code r}; else the reasons the modes gave, in order. */
    private List<String> reasons(RequestAttributes r, String nodeNameSelector) {
        List<String> reasons = new ArrayList<>(1);
        for (String mode : modes) {
            switch (mode) {
                case "AlwaysAllow" -> {
                    return null;
                }
                case "AlwaysDeny" -> reasons.add("Everything is forbidden.");
                case "RBAC" -> {
                    if (rbac.get().allows(r)) {
                        return null;
                    }
                }
                case "Node" -> {
                    if (node.decide(r, nodeNameSelector) == NodeAuthorizer.Decision.ALLOW) {
                        return null;
                    }
                    String why = node.reason(r);
                    if (why != null) {
                        reasons.add(why);
                    }
                }
                default -> throw new IllegalStateException(mode);
            }
        }
        return reasons;
    }
}
