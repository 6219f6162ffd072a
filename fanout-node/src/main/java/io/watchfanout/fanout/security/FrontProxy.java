package io.watchfanout.fanout.security;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * kube-apiserver's request-header authenticator (the front proxy, {@code --requestheader-*}):
 * a request whose client certificate chains to {@code --requestheader-client-ca-file} and whose
 * common name is one of {@code --requestheader-allowed-names} (any, when none are given) is
 * made on behalf of the user in the first of {@code --requestheader-username-headers} that has a
 * value, in the groups of every value of {@code --requestheader-group-headers}; the
 * {@code --requestheader-extra-headers-prefix} headers are the user's extra attributes, which no
 * authorizer of the node reads. A request without a username header, or with a certificate of
 * another CA, is not the front proxy's: the other authenticators decide (a client certificate of
 * {@code --client-ca-file} is its own user). A certificate of the proxy's CA with a name not
 * allowed is refused.
 *
 * <p>The HTTP port's TLS handshake accepts certificates of {@code --client-ca-file} and of
 * {@code --requestheader-client-ca-file} (kube-apiserver's union); a certificate of the proxy's CA
 * alone names no user of its own. This class verifies the chain against the proxy's CAs again,
 * read at start. Immutable and thread-safe.
 */
public final class FrontProxy {
    private final Set<TrustAnchor> anchors;
    private final Set<String> allowedNames;
    private final List<String> usernameHeaders;
    private final List<String> groupHeaders;

    /**
     * @param caFile {@code --requestheader-client-ca-file}: PEM certificates
     * @param allowedNames {@code --requestheader-allowed-names}; empty for any common name
     * @param usernameHeaders {@code --requestheader-username-headers}, e.g. {@code X-Remote-User}
     * @param groupHeaders {@code --requestheader-group-headers}, e.g. {@code X-Remote-Group}
     * @throws IOException when the CA file cannot be read or holds no certificate
     */
    public FrontProxy(Path caFile, List<String> allowedNames, List<String> usernameHeaders, List<String> groupHeaders)
            throws IOException {
        Set<TrustAnchor> read = new HashSet<>();
        try (InputStream in = Files.newInputStream(caFile)) {
            for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                read.add(new TrustAnchor((X509Certificate) c, null));
            }
        } catch (GeneralSecurityException e) {
            throw new IOException("--requestheader-client-ca-file " + caFile + ": " + e.getMessage(), e);
        }
        if (read.isEmpty()) {
            throw new IOException("--requestheader-client-ca-file " + caFile + ": no PEM certificate");
        }
        this.anchors = Set.copyOf(read);
        this.allowedNames = Set.copyOf(allowedNames);
        this.usernameHeaders = List.copyOf(usernameHeaders);
        this.groupHeaders = List.copyOf(groupHeaders);
    }

    /**
     * The user the front proxy asserts, or null when the request is not the front proxy's.
     *
     * @param chain the verified client certificate chain of the connection, leaf first; empty without one
     * @param headers a request header's values by name (case-insensitive), empty when absent
     * @throws AuthenticationException for a certificate of the proxy's CA whose name is not allowed
     */
    public Identity authenticate(List<X509Certificate> chain, Function<String, List<String>> headers)
            throws AuthenticationException {
        if (chain.isEmpty() || !verifies(chain)) {
            return null;
        }
        String user = null;
        for (String h : usernameHeaders) {
            for (String v : headers.apply(h)) {
                if (!v.isEmpty()) {
                    user = v;
                    break;
                }
            }
            if (user != null) {
                break;
            }
        }
        if (user == null) {
            return null;
        }
        String cn = commonName(chain.get(0));
        if (!allowedNames.isEmpty() && (cn == null || !allowedNames.contains(cn))) {
            throw new AuthenticationException("the front proxy's client certificate " + Objects.toString(cn, "")
                    + " is not one of --requestheader-allowed-names");
        }
        Set<String> groups = new LinkedHashSet<>();
        for (String h : groupHeaders) {
            groups.addAll(headers.apply(h));
        }
        groups.remove("");
        return new Identity(user, groups, Identity.Method.FRONT_PROXY);
    }

    private boolean verifies(List<X509Certificate> chain) {
        try {
            PKIXParameters params = new PKIXParameters(anchors);
            params.setRevocationEnabled(false);
            CertPathValidator.getInstance("PKIX")
                    .validate(CertificateFactory.getInstance("X.509").generateCertPath(chain), params);
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static String commonName(X509Certificate certificate) {
        try {
            List<Rdn> rdns = new LdapName(certificate.getSubjectX500Principal().getName()).getRdns();
            for (int i = rdns.size() - 1; i >= 0; i--) {
                if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
                    return String.valueOf(rdns.get(i).getValue());
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }
}
