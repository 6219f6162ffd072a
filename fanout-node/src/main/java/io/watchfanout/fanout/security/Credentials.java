package io.watchfanout.fanout.security;

import java.util.List;

/**
 * What a request presented, as the transport found it, before any check: the verified client
 * certificate's common name, and the raw token headers. Authenticators read what they know.
 *
 * @param certificateCommonName the common name of the client certificate the TLS handshake
 *     verified against {@code --client-ca-file}; null without one
 * @param authorization the raw value of HTTP's {@code Authorization} header or gRPC's
 *     {@code authorization} metadata (e.g. {@code Bearer <token>}); null when absent
 * @param etcdToken the raw value of gRPC's {@code token} metadata, where etcd's clients put
 *     the token {@code Authenticate} gave them (clientv3, jetcd, etcd3); null when absent
 * @param certificateOrganizations the organizations ({@code O}) of that certificate, which
 *     kube-apiserver takes as the user's groups; given only by the Kubernetes API, empty elsewhere
 */
public record Credentials(
        String certificateCommonName, String authorization, String etcdToken, List<String> certificateOrganizations) {
    /** A request that presented nothing. */
    public static final Credentials NONE = new Credentials(null, null, null);

    /** Copies the organizations. */
    public Credentials {
        certificateOrganizations = List.copyOf(certificateOrganizations);
    }

    /** Credentials without certificate organizations. */
    public Credentials(String certificateCommonName, String authorization, String etcdToken) {
        this(certificateCommonName, authorization, etcdToken, List.of());
    }

    private static final String BEARER = "bearer ";

    /**
     * The token the request presented: the bearer token of {@code Authorization}, else the
     * {@code token} metadata; null when neither is present.
     *
     * @throws AuthenticationException when {@code Authorization} is present but is not
     *     {@code Bearer <token>} with a non-empty token of visible ASCII (RFC 6750)
     */
    public String token() throws AuthenticationException {
        if (authorization != null) {
            if (authorization.length() <= BEARER.length()
                    || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
                throw new AuthenticationException("header Authorization: expected \"Bearer <token>\"");
            }
            String token = authorization.substring(BEARER.length()).trim();
            if (!isVisibleAscii(token)) {
                throw new AuthenticationException(
                        "header Authorization: the bearer token must be one word of visible ASCII characters");
            }
            return token;
        }
        if (etcdToken != null && !isVisibleAscii(etcdToken)) {
            throw new AuthenticationException("metadata token: expected one word of visible ASCII characters");
        }
        return etcdToken;
    }

    private static boolean isVisibleAscii(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= ' ' || c > '~') {
                return false;
            }
        }
        return true;
    }

    /** True when the request presented no certificate and no token. */
    public boolean isEmpty() {
        return certificateCommonName == null && authorization == null && etcdToken == null;
    }
}
