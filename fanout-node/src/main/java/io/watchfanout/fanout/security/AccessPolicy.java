package io.watchfanout.fanout.security;

import io.watchfanout.common.KeyRange;
import java.io.IOException;

/**
 * Which identities may do what with which keys: a policy file's rules, or etcd's own roles.
 * A request is allowed only when the whole normalised range is (etcd's rule; checking the
 * range before normalising it leaked keys, GHSA-xg4h-6gfc-h4m8).
 *
 * <p>Implementations are thread-safe; {@link #allows} does no blocking I/O.
 */
public interface AccessPolicy {
    /**
     * True when {@code identity} may {@code verb} every key of {@code range}.
     *
     * @param range the normalised range ({@link KeyRange}: a single key, or {@code [start, end)}
     *     with a null end for unbounded)
     */
    boolean allows(Identity identity, Verb verb, KeyRange range);

    /**
     * Re-reads the rules if they changed (the policy file; etcd's roles); called about once a
     * second from the security thread. On failure the previous rules stay in force.
     *
     * @return true when the rules changed (live watches are then checked again)
     * @throws java.io.IOException when changed rules cannot be read or parsed
     */
    default boolean reload() throws IOException {
        return false;
    }

    /** What this policy is, for the startup line: {@code file:/etc/policy.json}, {@code etcd}, {@code allow-all}. */
    String describe();

    /** A policy that allows everything: a node without authentication ({@code --anonymous} only, no {@code --authz}). */
    AccessPolicy ALLOW_ALL = new AccessPolicy() {
        @Override
        public boolean allows(Identity identity, Verb verb, KeyRange range) {
            return true;
        }

        @Override
        public String describe() {
            return "allow-all";
        }
    };

    /**
     * A policy that allows nothing: the etcd-key APIs of a node whose only authorization is the
     * Kubernetes API's {@code --authorization-mode}.
     */
    AccessPolicy DENY_ALL = new AccessPolicy() {
        @Override
        public boolean allows(Identity identity, Verb verb, KeyRange range) {
            return false;
        }

        @Override
        public String describe() {
            return "deny-all (no --authz)";
        }
    };
}
