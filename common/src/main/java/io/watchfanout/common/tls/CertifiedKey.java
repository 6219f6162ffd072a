package io.watchfanout.common.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * One load of the server's certificate chain and private key: the JDK's key manager over them,
 * under an alias of its own, so that a handshake that chose this alias gets this chain and key
 * even if a reload happens in between.
 *
 * <p>Immutable and thread-safe.
 *
 * @param alias the only alias of {@code manager}
 * @param manager the JDK's ({@code SunX509}) key manager of the chain and key
 * @param chain the certificate chain, the server's certificate first
 */
record CertifiedKey(String alias, X509ExtendedKeyManager manager, List<X509Certificate> chain) {
    /** A password of the in-memory key store only; the key is never written anywhere. */
    private static final char[] IN_MEMORY = "in-memory".toCharArray();
    /** The signature that proves a key belongs to a certificate, by key algorithm. */
    private static final Map<String, String> PROOF = Map.of(
            "EC", "SHA256withECDSA",
            "RSA", "SHA256withRSA",
            "Ed25519", "Ed25519",
            "Ed448", "Ed448",
            "EdDSA", "EdDSA");

    /**
     * Parses and checks a certificate chain and its key.
     *
     * @param files the flags' files, for messages
     * @param certPem the {@code --tls-cert-file} bytes
     * @param keyPem the {@code --tls-key-file} bytes
     * @param alias the alias of this load
     * @throws TlsMaterialException if either does not parse or the key is not the certificate's
     */
    static CertifiedKey load(TlsFiles files, byte[] certPem, byte[] keyPem, String alias) {
        String certSource = TlsFiles.CERT_FLAG + " " + files.certFile();
        String keySource = TlsFiles.KEY_FLAG + " " + files.keyFile();
        List<X509Certificate> chain = Pem.certificates(certPem, certSource);
        PrivateKey key = Pem.privateKey(keyPem, keySource);
        if (!belongs(key, chain.get(0))) {
            throw new TlsMaterialException(keySource + ": not the private key of the certificate in " + certSource
                    + " (" + chain.get(0).getSubjectX500Principal().getName() + ")");
        }
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry(alias, key, IN_MEMORY, chain.toArray(new X509Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
            kmf.init(store, IN_MEMORY);
            return new CertifiedKey(alias, (X509ExtendedKeyManager) kmf.getKeyManagers()[0], List.copyOf(chain));
        } catch (GeneralSecurityException | IOException e) {
            throw new TlsMaterialException(
                    keySource + ": the JDK does not take this key and certificate (" + e.getMessage() + ")", e);
        }
    }

    /** Whether {@code key} signs what {@code cert}'s public key verifies. */
    private static boolean belongs(PrivateKey key, X509Certificate cert) {
        if (!key.getAlgorithm().equals(cert.getPublicKey().getAlgorithm())) {
            return false;
        }
        String algorithm = PROOF.get(key.getAlgorithm());
        if (algorithm == null) {
            return true; // e.g. RSASSA-PSS: its parameters vary; the handshake itself will tell
        }
        try {
            byte[] probe = "watch-fanout key check".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(cert.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** The server's certificate. */
    X509Certificate leaf() {
        return chain.get(0);
    }

    @Override
    public String toString() {
        X509Certificate leaf = leaf();
        return "certificate " + leaf.getSubjectX500Principal().getName() + " serial "
                + leaf.getSerialNumber().toString(16) + ", valid until "
                + leaf.getNotAfter().toInstant();
    }
}
