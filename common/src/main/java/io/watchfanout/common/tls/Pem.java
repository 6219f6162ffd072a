package io.watchfanout.common.tls;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * PEM parsing with the JDK alone: X.509 certificates and unencrypted PKCS#8 private keys. Each
 * failure is a {@link TlsMaterialException} naming the flag and the file.
 *
 * <p>Stateless and thread-safe.
 */
final class Pem {
    private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
    private static final String KEY_END = "-----END PRIVATE KEY-----";
    /** The key algorithms a PKCS#8 key is tried as, the common ones first. */
    private static final List<String> KEY_ALGORITHMS = List.of("EC", "RSA", "Ed25519", "Ed448", "RSASSA-PSS");

    private Pem() {}

    /**
     * Every certificate of a PEM file, in order.
     *
     * @param source the flag and file, for messages, e.g. {@code --tls-cert-file /etc/tls/cert.pem}
     * @throws TlsMaterialException if there is none, or one does not parse
     */
    static List<X509Certificate> certificates(byte[] pem, String source) {
        if (!new String(pem, StandardCharsets.US_ASCII).contains("-----BEGIN CERTIFICATE-----")) {
            throw new TlsMaterialException(source + ": no certificate (expected: PEM, -----BEGIN CERTIFICATE-----)");
        }
        try {
            List<X509Certificate> certs = new ArrayList<>();
            for (var c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem))) {
                certs.add((X509Certificate) c);
            }
            if (certs.isEmpty()) {
                throw new TlsMaterialException(
                        source + ": no certificate (expected: PEM, -----BEGIN CERTIFICATE-----)");
            }
            return certs;
        } catch (CertificateException e) {
            throw new TlsMaterialException(source + ": unreadable certificate PEM (" + e.getMessage() + ")", e);
        }
    }

    /**
     * The private key of an unencrypted PKCS#8 PEM file.
     *
     * @param source the flag and file, for messages
     * @throws TlsMaterialException for another PEM type (SEC1 {@code EC PRIVATE KEY}, PKCS#1
     *     {@code RSA PRIVATE KEY}, an encrypted key) or a key no JDK algorithm reads
     */
    static PrivateKey privateKey(byte[] pem, String source) {
        String text = new String(pem, StandardCharsets.US_ASCII);
        int begin = text.indexOf(KEY_BEGIN);
        int end = text.indexOf(KEY_END, Math.max(begin, 0));
        if (begin < 0 || end < 0) {
            String found = text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
                    ? "an encrypted key"
                    : text.contains("PRIVATE KEY-----") ? "a key in another format" : "no private key";
            throw new TlsMaterialException(source + ": " + found
                    + " (expected: an unencrypted PKCS#8 PEM key, -----BEGIN PRIVATE KEY-----; "
                    + "openssl pkcs8 -topk8 -nocrypt converts one)");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(text.substring(begin + KEY_BEGIN.length(), end));
        } catch (IllegalArgumentException e) {
            throw new TlsMaterialException(source + ": unreadable private key PEM (" + e.getMessage() + ")", e);
        }
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // not a key of this algorithm: try the next
            }
        }
        throw new TlsMaterialException(
                source + ": unreadable PKCS#8 private key (expected one of " + KEY_ALGORITHMS + ")");
    }
}
