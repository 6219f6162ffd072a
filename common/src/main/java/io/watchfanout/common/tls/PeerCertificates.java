package io.watchfanout.common.tls;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The verified client certificate of a TLS connection, for authentication: its chain and the
 * leaf's common name. The session comes from the front end:
 * {@code exchange.getConnection().getSslSessionInfo().getSSLSession()} on the HTTP port
 * (Undertow; {@code getSslSessionInfo()} is null on a plaintext connection), and
 * {@code call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)} on the etcd API's gRPC port.
 * With {@code --client-ca-file} the handshake has already checked the chain against those CAs.
 *
 * <p>Stateless and thread-safe.
 */
public final class PeerCertificates {
    private PeerCertificates() {}

    /**
     * The peer's certificate chain, its own certificate first.
     *
     * @param session a TLS session, or null (plaintext)
     * @return empty when there is no session or the peer presented no certificate
     */
    public static List<X509Certificate> chain(SSLSession session) {
        if (session == null) {
            return List.of();
        }
        Certificate[] certs;
        try {
            certs = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            return List.of();
        }
        List<X509Certificate> chain = new ArrayList<>();
        for (Certificate c : certs) {
            if (c instanceof X509Certificate x) {
                chain.add(x);
            }
        }
        return List.copyOf(chain);
    }

    /**
     * The common name ({@code CN}) of the peer's certificate.
     *
     * @param session a TLS session, or null
     * @return the CN, or null without a session, a client certificate or a CN in its subject
     */
    public static String commonName(SSLSession session) {
        List<X509Certificate> chain = chain(session);
        return chain.isEmpty() ? null : commonName(chain.get(0));
    }

    /**
     * The common name of a certificate's subject; of several, the most specific: the first in the
     * subject's RFC 2253 form ({@code CN=alice,O=admins} gives {@code alice}).
     *
     * @return the CN, or null when the subject has none (or an empty one)
     */
    public static String commonName(X509Certificate certificate) {
        try {
            List<Rdn> rdns = new LdapName(certificate.getSubjectX500Principal().getName()).getRdns();
            // LdapName lists the RDNs from the right (least specific) to the left (most specific).
            for (int i = rdns.size() - 1; i >= 0; i--) {
                if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
                    String cn = String.valueOf(rdns.get(i).getValue());
                    return cn.isEmpty() ? null : cn;
                }
            }
            return null;
        } catch (InvalidNameException e) {
            return null;
        }
    }
}
