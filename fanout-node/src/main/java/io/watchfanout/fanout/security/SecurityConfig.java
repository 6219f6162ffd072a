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
 * @param jwt the {@code --jwt-*} flags
 * @param etcdUserAuth {@code --etcd-user-auth}: etcd's own users (tokens from a forwarded {@code Authenticate})
 * @param httpAuthn {@code --http-authn}: methods of the HTTP port; empty for every configured one
 * @param etcdApiAuthn {@code --etcd-api-authn}: methods of the etcd API port; empty for every configured one
 * @param authz {@code --authz}: {@code file:PATH}, {@code etcd}, or null for none
 * @param authzEtcdRefresh {@code --authz-etcd-refresh}
 * @param limits the watch limits
 * @param kubernetes the Kubernetes API's identities and authorization
 */
public record SecurityConfig(
        boolean anonymous,
        boolean clientCertAuth,
        Path tokenAuthFile,
        Jwt jwt,
        boolean etcdUserAuth,
        List<String> httpAuthn,
        List<String> etcdApiAuthn,
        String authz,
        Duration authzEtcdRefresh,
        WatchLimits limits,
        Kubernetes kubernetes) {
    /** The method names of {@code --http-authn} and {@code --etcd-api-authn}. */
    public static final List<String> METHODS = List.of("cert", "token", "jwt", "serviceaccount", "etcd");
    /** The {@code --authorization-mode} names the node implements (kube-apiserver's spelling). */
    public static final List<String> AUTHORIZATION_MODES = List.of("Node", "RBAC", "AlwaysAllow", "AlwaysDeny");

    /**
     * The Kubernetes API's side of security, as kube-apiserver's flags name it (README.md, "The
     * Kubernetes API").
     *
     * @param serviceAccountKeyFiles {@code --service-account-key-file}: PEM files of the keys
     *     ServiceAccount tokens are signed with; empty for no ServiceAccount tokens
     * @param serviceAccountIssuers {@code --service-account-issuer}: the accepted issuers of bound tokens
     * @param apiAudiences {@code --api-audiences}: accepted audiences; empty for the issuers
     * @param authorizationModes {@code --authorization-mode}: the authorizers of the Kubernetes
     *     API in order ({@link #AUTHORIZATION_MODES}); empty for the node's own policy ({@code --authz})
     * @param encryptionProviderConfig {@code --encryption-provider-config}: the keys of values
     *     kube-apiserver encrypted at rest, or null
     * @param frontProxy the {@code --requestheader-*} flags, or null without a front proxy
     */
    public record Kubernetes(
            List<Path> serviceAccountKeyFiles,
            List<String> serviceAccountIssuers,
            List<String> apiAudiences,
            List<String> authorizationModes,
            Path encryptionProviderConfig,
            RequestHeaders frontProxy) {
        /** No ServiceAccount tokens; the Kubernetes API checked by {@code --authz} as {@code /v1}. */
        public static final Kubernetes NONE = new Kubernetes(List.of(), List.of(), List.of(), List.of(), null, null);

        /** Copies the lists. */
        public Kubernetes {
            serviceAccountKeyFiles = List.copyOf(serviceAccountKeyFiles);
            serviceAccountIssuers = List.copyOf(serviceAccountIssuers);
            apiAudiences = List.copyOf(apiAudiences);
            authorizationModes = List.copyOf(authorizationModes);
        }
    }

    /**
     * kube-apiserver's front proxy flags ({@link FrontProxy}).
     *
     * @param clientCaFile {@code --requestheader-client-ca-file}
     * @param allowedNames {@code --requestheader-allowed-names}; empty for any
     * @param usernameHeaders {@code --requestheader-username-headers}
     * @param groupHeaders {@code --requestheader-group-headers}
     * @param extraHeadersPrefixes {@code --requestheader-extra-headers-prefix}
     */
    public record RequestHeaders(
            Path clientCaFile,
            List<String> allowedNames,
            List<String> usernameHeaders,
            List<String> groupHeaders,
            List<String> extraHeadersPrefixes) {
        /** Copies the lists. */
        public RequestHeaders {
            Objects.requireNonNull(clientCaFile, "clientCaFile");
            allowedNames = List.copyOf(allowedNames);
            usernameHeaders = List.copyOf(usernameHeaders);
            groupHeaders = List.copyOf(groupHeaders);
            extraHeadersPrefixes = List.copyOf(extraHeadersPrefixes);
        }
    }

    /**
     * The JWT authenticator's flags.
     *
     * @param jwksFile {@code --jwt-jwks-file}, or null for no JWTs
     * @param issuer {@code --jwt-issuer}, or null
     * @param audience {@code --jwt-audience}, or null
     * @param usernameClaim {@code --jwt-username-claim}
     * @param groupsClaim {@code --jwt-groups-claim}
     */
    public record Jwt(Path jwksFile, String issuer, String audience, String usernameClaim, String groupsClaim) {
        /** No JWTs, with the claims' default names. */
        public static final Jwt NONE = new Jwt(null, null, null, "sub", "groups");
    }

    /** Copies the lists. */
    public SecurityConfig {
        Objects.requireNonNull(jwt, "jwt");
        httpAuthn = List.copyOf(httpAuthn);
        etcdApiAuthn = List.copyOf(etcdApiAuthn);
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(kubernetes, "kubernetes");
    }

    /** A configuration without Kubernetes identities or authorization modes. */
    public SecurityConfig(
            boolean anonymous,
            boolean clientCertAuth,
            Path tokenAuthFile,
            Jwt jwt,
            boolean etcdUserAuth,
            List<String> httpAuthn,
            List<String> etcdApiAuthn,
            String authz,
            Duration authzEtcdRefresh,
            WatchLimits limits) {
        this(
                anonymous,
                clientCertAuth,
                tokenAuthFile,
                jwt,
                etcdUserAuth,
                httpAuthn,
                etcdApiAuthn,
                authz,
                authzEtcdRefresh,
                limits,
                Kubernetes.NONE);
    }

    /** Anonymous access, everything allowed, no limits: tests and the plain local stack. */
    public static SecurityConfig openAccess() {
        return new SecurityConfig(
                true,
                false,
                null,
                Jwt.NONE,
                false,
                List.of(),
                List.of(),
                null,
                Duration.ofSeconds(5),
                WatchLimits.NONE);
    }

    /** The authentication methods configured, in the order they are asked: cert, token, jwt, serviceaccount, etcd. */
    public List<String> configuredMethods() {
        List<String> out = new ArrayList<>();
        if (clientCertAuth) {
            out.add("cert");
        }
        if (tokenAuthFile != null) {
            out.add("token");
        }
        if (jwt.jwksFile() != null) {
            out.add("jwt");
        }
        if (!kubernetes.serviceAccountKeyFiles().isEmpty()) {
            out.add("serviceaccount");
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
        return anonymous && (authz != null || !kubernetes.authorizationModes().isEmpty());
    }

    /** True when nothing is authenticated and nothing checked: {@link AccessControl#open}. */
    public boolean isOpen() {
        return configuredMethods().isEmpty()
                && authz == null
                && kubernetes.authorizationModes().isEmpty();
    }

    /**
     * What is wrong with the combination of flags, as a usage error naming them, or null.
     *
     * @param etcdEndpoints whether {@code --etcd-endpoints} is set
     */
    public String problem(boolean etcdEndpoints) {
        List<String> configured = configuredMethods();
        if (configured.isEmpty() && !anonymous && kubernetes.frontProxy() == null) {
            return "no way to authenticate clients: give --client-cert-auth, --token-auth-file, --jwt-jwks-file, "
                    + "--service-account-key-file or --etcd-user-auth, or --anonymous to serve without authentication";
        }
        List<String> modes = kubernetes.authorizationModes();
        if (!configured.isEmpty() && authz == null && modes.isEmpty()) {
            return "authentication without --authz would deny every request: give --authz=file:PATH or --authz=etcd "
                    + "(or --authorization-mode for the Kubernetes API)";
        }
        for (String mode : modes) {
            if (!AUTHORIZATION_MODES.contains(mode)) {
                return "--authorization-mode: \"" + mode + "\" is not available here (expected: "
                        + String.join(", ", AUTHORIZATION_MODES) + "; kube-apiserver's spelling)";
            }
            if (modes.indexOf(mode) != modes.lastIndexOf(mode)) {
                return "--authorization-mode: \"" + mode + "\" is given twice";
            }
        }
        if (kubernetes.serviceAccountKeyFiles().isEmpty()
                && (!kubernetes.serviceAccountIssuers().isEmpty()
                        || !kubernetes.apiAudiences().isEmpty())) {
            return "--service-account-issuer and --api-audiences need --service-account-key-file";
        }
        if (!kubernetes.serviceAccountKeyFiles().isEmpty()
                && kubernetes.serviceAccountIssuers().isEmpty()) {
            return "--service-account-key-file needs --service-account-issuer (as kube-apiserver)";
        }
        if (jwt.jwksFile() != null && (jwt.issuer() == null || jwt.audience() == null)) {
            return "--jwt-jwks-file needs --jwt-issuer and --jwt-audience";
        }
        if (jwt.jwksFile() == null && (jwt.issuer() != null || jwt.audience() != null)) {
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
