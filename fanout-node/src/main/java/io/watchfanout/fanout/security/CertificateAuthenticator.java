package io.watchfanout.fanout.security;

/**
 * {@code cert} ({@code --client-cert-auth}): the identity is the common name of the client
 * certificate the TLS handshake already verified against {@code --client-ca-file}, as etcd's
 * {@code --client-cert-auth} takes it; no groups (the front ends pass only the common name).
 *
 * <p>Stateless and thread-safe.
 */
final class CertificateAuthenticator implements Authenticator {
    @Override
    public Identity authenticate(Credentials credentials) throws AuthenticationException {
        String cn = credentials.certificateCommonName();
        if (cn == null) {
            return null;
        }
        if (cn.isEmpty()) {
            throw new AuthenticationException("the client certificate has an empty common name");
        }
        return Identity.of(cn, Identity.Method.CERTIFICATE);
    }

    @Override
    public String name() {
        return "cert";
    }
}
