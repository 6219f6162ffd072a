package io.watchfanout.common.tls;

import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.stream.Collectors;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * One load of {@code --client-ca-file}: the CAs whose client certificates are accepted, and the
 * JDK's PKIX trust manager over them.
 *
 * <p>Immutable and thread-safe.
 *
 * @param manager the PKIX trust manager of {@code cas}
 * @param cas the CA certificates of the bundle, in file order
 */
record ClientCas(X509ExtendedTrustManager manager, List<X509Certificate> cas) {
    /**
     * Parses a PEM bundle of CA certificates.
     *
     * @param flag the flag that names the bundle, for messages
     * @param file the bundle, for messages
     * @throws TlsMaterialException if it holds no certificate or one does not parse
     */
    static ClientCas load(String flag, Path file, byte[] pem) {
        String source = flag + " " + file;
        List<X509Certificate> cas = Pem.certificates(pem, source);
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            for (int i = 0; i < cas.size(); i++) {
                store.setCertificateEntry("ca-" + i, cas.get(i));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
            tmf.init(store);
            return new ClientCas((X509ExtendedTrustManager) tmf.getTrustManagers()[0], List.copyOf(cas));
        } catch (GeneralSecurityException | IOException e) {
            throw new TlsMaterialException(
                    source + ": the JDK does not take these CA certificates (" + e.getMessage() + ")", e);
        }
    }

    @Override
    public String toString() {
        return "client CAs "
                + cas.stream().map(c -> c.getSubjectX500Principal().getName()).collect(Collectors.joining("; "));
    }
}
