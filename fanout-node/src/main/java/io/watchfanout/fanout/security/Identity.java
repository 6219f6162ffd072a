package io.watchfanout.fanout.security;

import java.util.Objects;
import java.util.Set;

/**
 * Who is asking: the name an authenticator established and the groups it carries, as
 * Kubernetes' {@code user.Info} (name and groups) and etcd's user name.
 *
 * @param name the subject: a certificate's common name, a token file's user, a JWT's subject
 *     claim, an etcd user, or {@link #ANONYMOUS}'s {@code system:anonymous}; never empty
 * @param groups the subject's groups (token file, JWT groups claim, certificate organisations);
 *     possibly empty
 * @param method how the identity was established
 */
public record Identity(String name, Set<String> groups, Method method) {
    /** How an identity was established; for audit lines and metrics. */
    public enum Method {
        /** A verified client certificate's common name (etcd's {@code --client-cert-auth}). */
        CERTIFICATE,
        /** A bearer token from the static token file (kube-apiserver's {@code --token-auth-file}). */
        TOKEN,
        /** A JWT verified against the JWKS with issuer and audience. */
        JWT,
        /** A Kubernetes ServiceAccount token (kube-apiserver's {@code --service-account-key-file}). */
        SERVICE_ACCOUNT,
        /** A user a front proxy asserts in request headers (kube-apiserver's {@code --requestheader-*}). */
        FRONT_PROXY,
        /** A token etcd returned for a forwarded {@code Authenticate}. */
        ETCD,
        /** No credentials, served because {@code --anonymous} allows it. */
        ANONYMOUS
    }

    /** The identity of a request without credentials when {@code --anonymous} allows it (Kubernetes' names). */
    public static final Identity ANONYMOUS =
            new Identity("system:anonymous", Set.of("system:unauthenticated"), Method.ANONYMOUS);

    /** Copies the groups; rejects an empty name. */
    public Identity {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(method, "method");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("an identity needs a name");
        }
        groups = Set.copyOf(groups);
    }

    /** A subject without groups. */
    public static Identity of(String name, Method method) {
        return new Identity(name, Set.of(), method);
    }

    @Override
    public String toString() {
        return name;
    }
}
