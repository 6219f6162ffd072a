package io.watchfanout.fanout.security;

import java.util.LinkedHashSet;

/**
 * {@code cert} ({@code --client-cert-auth}): the identity is the common name of the client
 * certificate the TLS handshake already verified against {@code --client-ca-file}, as etcd's
 * {@code --client-cert-auth} takes it; its groups are the certificate's organizations where the
 * front end passes them (the Kubernetes API, as kube-apiserver's x509 authenticator), none
 * elsewhere.
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
        return new Identity(
                cn, new LinkedHashSet<>(credentials.certificateOrganizations()), Identity.Method.CERTIFICATE);
    }

    @Override
    public String name() {
        return "cert";
    }
}
