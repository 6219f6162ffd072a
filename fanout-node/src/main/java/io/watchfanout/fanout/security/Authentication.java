package io.watchfanout.fanout.security;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The authenticators of one listener, asked in turn as kube-apiserver's union authenticator
 * does: the first identity established wins; when none is and one refused the credentials, its
 * refusal is the answer (an invalid token is never served as anonymous); a request that
 * presented nothing any of them reads is anonymous when {@code --anonymous} allows it.
 * Every established identity gets the group {@code system:authenticated}, as in Kubernetes.
 * The token authenticators each claim only their own kind of token ({@link TokenKind}), so the
 * refusal of a token is the one of the authenticator it belongs to.
 *
 * <p>Immutable and thread-safe.
 */
final class Authentication {
    static final String AUTHENTICATED = "system:authenticated";

    private final List<Authenticator> authenticators;
    private final boolean anonymous;

    Authentication(List<Authenticator> authenticators, boolean anonymous) {
        this.authenticators = List.copyOf(authenticators);
        this.anonymous = anonymous;
    }

    Identity authenticate(Credentials credentials) throws AuthenticationException {
        AuthenticationException refused = null;
        for (Authenticator a : authenticators) {
            try {
                Identity id = a.authenticate(credentials);
                if (id != null) {
                    return withAuthenticatedGroup(id);
                }
            } catch (AuthenticationException e) {
                if (refused == null) {
                    refused = e;
                }
            }
        }
        if (refused != null) {
            throw refused;
        }
        // A malformed Authorization header is refused even where no token authenticator is configured.
        String token = credentials.token();
        if (token == null && anonymous) {
            return Identity.ANONYMOUS;
        }
        if (token != null) {
            throw new AuthenticationException("the token is not accepted here");
        }
        throw new AuthenticationException(
                "no credentials (expected: " + expected() + "); this node serves no anonymous requests");
    }

    List<Authenticator> authenticators() {
        return authenticators;
    }

    boolean anonymous() {
        return anonymous;
    }

    private String expected() {
        Set<String> kinds = new LinkedHashSet<>();
        for (Authenticator a : authenticators) {
            kinds.add(
                    switch (a.name()) {
                        case "cert" -> "a client certificate";
                        case "token", "jwt" -> "Authorization: Bearer <token>";
                        case "etcd" -> "an etcd token from Authenticate";
                        default -> a.name();
                    });
        }
        return kinds.isEmpty() ? "nothing is accepted" : String.join(" or ", kinds);
    }

    private static Identity withAuthenticatedGroup(Identity id) {
        if (id.groups().contains(AUTHENTICATED)) {
            return id;
        }
        Set<String> groups = new HashSet<>(id.groups());
        groups.add(AUTHENTICATED);
        return new Identity(id.name(), groups, id.method());
    }
}
