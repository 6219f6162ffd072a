package io.watchfanout.testkit;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * A TLS client's {@link SSLContext} from PEM files, for tests of the listeners: it trusts the
 * CA of a {@link Pki} and presents a client certificate of one, or none. Stateless and
 * thread-safe.
 */
public final class TlsClientContext {
    private static final char[] IN_MEMORY = "in-memory".toCharArray();

    private TlsClientContext() {}

    /**
     * A context that trusts the certificates of {@code caCert} and presents {@code client}.
     *
     * @param caCert PEM file of the CA that signed the server's certificate
     * @param client the client's certificate and key ({@link Pki#client}), or null for none
     * @throws UncheckedIOException if a file cannot be read
     */
    public static SSLContext of(Path caCert, Pki.Issued client) {
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            int i = 0;
            for (Certificate c : certificates(caCert)) {
                trust.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            KeyManagerFactory kmf = null;
            if (client != null) {
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry(
                        "client",
                        privateKey(client.key()),
                        IN_MEMORY,
                        certificates(client.cert()).toArray(new Certificate[0]));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, IN_MEMORY);
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(
                    kmf == null
                            ? null
                            : new KeyManager[] {new AlwaysPresent((X509ExtendedKeyManager) kmf.getKeyManagers()[0])},
                    tmf.getTrustManagers(),
                    null);
            return context;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot make a TLS client context", e);
        }
    }

    /**
     * Presents the client certificate whatever CAs the server names in its request, as curl and
     * OpenSSL clients do (the JDK's own key manager would send none for a server that names
     * another CA), so that a server's refusal of a certificate of another CA is what a test sees.
     */
    private static final class AlwaysPresent extends X509ExtendedKeyManager {
        private final X509ExtendedKeyManager keys;

        AlwaysPresent(X509ExtendedKeyManager keys) {
            this.keys = keys;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return keys.getClientAliases(keyType, null);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return keys.chooseClientAlias(keyType, null, socket);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return keys.chooseEngineClientAlias(keyType, null, engine);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return keys.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return keys.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return keys.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return keys.getPrivateKey(alias);
        }
    }

    /**
     * Connects with {@code context}, completes a handshake and returns the certificate the server
     * presented.
     *
     * @throws IOException if the handshake fails on the client's side (an untrusted server); a
     *     server's refusal of the client's certificate shows only with the first read (TLS 1.3)
     */
    public static X509Certificate served(SSLContext context, String host, int port) throws IOException {
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(host, port)) {
            socket.startHandshake();
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }

    private static Collection<? extends Certificate> certificates(Path pem)
            throws IOException, GeneralSecurityException {
        try (var in = Files.newInputStream(pem)) {
            return CertificateFactory.getInstance("X.509").generateCertificates(in);
        }
    }

    private static PrivateKey privateKey(Path pem) throws IOException {
        try (Reader r = Files.newBufferedReader(pem, StandardCharsets.US_ASCII);
                PEMParser parser = new PEMParser(r)) {
            return new JcaPEMKeyConverter().getPrivateKey((PrivateKeyInfo) parser.readObject());
        }
    }
}
