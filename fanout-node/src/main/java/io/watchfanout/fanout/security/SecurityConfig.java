package io.watchfanout.fanout.security;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A node's authentication, authorization and watch limits, as its flags give them (README.md,
 * "Security"; docs/SECURITY.md).
 *
 * @param anonymous {@code --anonymous}: requests without credentials are served as
 *     {@link Identity#ANONYMOUS}
 * @param clientCertAuth {@code --client-cert-auth}: a verified client certificate's common name is the identity
 * @param tokenAuthFile {@code --token-auth-file}, or null
 * @param jwtJwksFile {@code --jwt-jwks-file}, or null
 * @param jwtIssuer {@code --jwt-issuer}, or null
 * @param jwtAudience {@code --jwt-audience}, or null
 * @param jwtUsernameClaim {@code --jwt-username-claim}
 * @param jwtGroupsClaim {@code --jwt-groups-claim}
 * @param etcdUserAuth {@code --etcd-user-auth}: etcd's own users (tokens from a forwarded {@code Authenticate})
 * @param httpAuthn {@code --http-authn}: methods of the HTTP port; empty for every configured one
 * @param etcdApiAuthn {@code --etcd-api-authn}: methods of the etcd API port; empty for every configured one
 * @param authz {@code --authz}: {@code file:PATH}, {@code etcd}, or null for none
 * @param authzEtcdRefresh {@code --authz-etcd-refresh}
 * @param limits the watch limits
 */
public record SecurityConfig(
        boolean anonymous,
        boolean clientCertAuth,
        Path tokenAuthFile,
        Path jwtJwksFile,
        String jwtIssuer,
        String jwtAudience,
        String jwtUsernameClaim,
        String jwtGroupsClaim,
        boolean etcdUserAuth,
        List<String> httpAuthn,
        List<String> etcdApiAuthn,
        String authz,
        Duration authzEtcdRefresh,
        WatchLimits limits) {
    /** The method names of {@code --http-authn} and {@code --etcd-api-authn}. */
    public static final List<String> METHODS = List.of("cert", "token", "jwt", "etcd");

    /** Copies the lists. */
    public SecurityConfig {
        httpAuthn = List.copyOf(httpAuthn);
        etcdApiAuthn = List.copyOf(etcdApiAuthn);
        Objects.requireNonNull(limits, "limits");
    }

    /** Anonymous access, everything allowed, no limits: tests and the plain local stack. */
    public static SecurityConfig openAccess() {
        return new SecurityConfig(
                true,
                false,
                null,
                null,
                null,
                null,
                "sub",
                "groups",
                false,
                List.of(),
                List.of(),
                null,
                Duration.ofSeconds(5),
                WatchLimits.NONE);
    }

    /** The authentication methods configured, in the order they are asked: cert, token, jwt, etcd. */
    public List<String> configuredMethods() {
        List<String> out = new ArrayList<>();
        if (clientCertAuth) {
            out.add("cert");
        }
        if (tokenAuthFile != null) {
            out.add("token");
        }
        if (jwtJwksFile != null) {
            out.add("jwt");
        }
        if (etcdUserAuth) {
            out.add("etcd");
        }
        return out;
    }

    /** The methods of {@code listener}: its flag's list, or every configured method. */
    public List<String> methods(Listener listener) {
        List<String> chosen = listener == Listener.HTTP ? httpAuthn : etcdApiAuthn;
        return chosen.isEmpty() ? configuredMethods() : chosen;
    }

    /**
     * True when a client may come without a certificate and still be served: another method
     * than certificates is configured, or anonymous requests are checked by a policy. Then TLS
     * asks for a client certificate and verifies one that is presented, but lets a client without
     * one through to authentication (401 when it presents nothing else); otherwise, with
     * {@code --client-ca-file}, the handshake requires one (mutual TLS as etcd does it).
     */
    public boolean acceptsClientsWithoutCertificates() {
        for (String m : configuredMethods()) {
            if (!m.equals("cert")) {
                return true;
            }
        }
        return anonymous && authz != null;
    }

    /** True when nothing is authenticated and nothing checked: {@link AccessControl#open}. */
    public boolean isOpen() {
        return configuredMethods().isEmpty() && authz == null;
    }

    /**
     * What is wrong with the combination of flags, as a usage error naming them, or null.
     *
     * @param etcdEndpoints whether {@code --etcd-endpoints} is set
     */
    public String problem(boolean etcdEndpoints) {
        List<String> configured = configuredMethods();
        if (configured.isEmpty() && !anonymous) {
            return "no way to authenticate clients: give --client-cert-auth, --token-auth-file, --jwt-jwks-file or "
                    + "--etcd-user-auth, or --anonymous to serve without authentication";
        }
        if (!configured.isEmpty() && authz == null) {
            return "authentication without --authz would deny every request: give --authz=file:PATH or --authz=etcd";
        }
        if (jwtJwksFile != null && (jwtIssuer == null || jwtAudience == null)) {
            return "--jwt-jwks-file needs --jwt-issuer and --jwt-audience";
        }
        if (jwtJwksFile == null && (jwtIssuer != null || jwtAudience != null)) {
            return "--jwt-issuer and --jwt-audience need --jwt-jwks-file";
        }
        if ((etcdUserAuth || "etcd".equals(authz)) && !etcdEndpoints) {
            return (etcdUserAuth ? "--etcd-user-auth" : "--authz=etcd") + " needs --etcd-endpoints";
        }
        for (Listener l : Listener.values()) {
            String flag = l == Listener.HTTP ? "--http-authn" : "--etcd-api-authn";
            for (String m : l == Listener.HTTP ? httpAuthn : etcdApiAuthn) {
                if (!METHODS.contains(m)) {
                    return flag + ": unknown method \"" + m + "\" (expected: " + String.join(", ", METHODS) + ")";
                }
                if (!configured.contains(m)) {
                    return flag + ": method \"" + m + "\" is not configured (configured: "
                            + (configured.isEmpty() ? "none" : String.join(", ", configured)) + ")";
                }
            }
        }
        return null;
    }
}
