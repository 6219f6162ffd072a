package io.watchfanout.fanout.security;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The common name of a connection's client certificate, for {@link Credentials}: the one place
 * the front ends read it. The handshake has verified the certificate against
 * {@code --client-ca-file} before any request arrives. Stateless and thread-safe.
 */
public final class ClientCertificates {
    private ClientCertificates() {}

    /**
     * The {@code CN} of the subject of the peer's own certificate.
     *
     * @param session the connection's TLS session, or null on a plaintext connection
     * @return null without a session, a client certificate, or a CN in its subject
     */
    public static String commonName(SSLSession session) {
        if (session == null) {
            return null;
        }
        Certificate[] chain;
        try {
            chain = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
        if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
            return null;
        }
        try {
            for (Rdn rdn : new LdapName(leaf.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    String cn = rdn.getValue().toString();
                    return cn.isEmpty() ? null : cn;
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }
}
