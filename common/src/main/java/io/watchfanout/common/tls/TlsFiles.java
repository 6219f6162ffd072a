package io.watchfanout.common.tls;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where a listener's TLS material is: {@code --tls-cert-file}, {@code --tls-key-file} and,
 * for mutual TLS, {@code --client-ca-file}. {@link ServerTls#load} reads them.
 *
 * @param certFile PEM certificate chain, the server's certificate first
 * @param keyFile the certificate's private key, unencrypted PKCS#8 PEM
 *     ({@code -----BEGIN PRIVATE KEY-----})
 * @param clientCaFile PEM bundle of the CAs whose client certificates are accepted, or null:
 *     clients then present none
 */
public record TlsFiles(Path certFile, Path keyFile, Path clientCaFile) {
    /** The certificate flag's name, as messages name it. */
    public static final String CERT_FLAG = "--tls-cert-file";
    /** The key flag's name. */
    public static final String KEY_FLAG = "--tls-key-file";
    /** The client CA flag's name. */
    public static final String CLIENT_CA_FLAG = "--client-ca-file";

    /** @throws NullPointerException without a certificate or a key file */
    public TlsFiles {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
    }

    /**
     * The files of the three flags as given, each null when not set.
     *
     * @return null when none is set (plaintext)
     * @throws IllegalArgumentException when only one of certificate and key is set, or a client CA
     *     without them; the message names the flags
     */
    public static TlsFiles of(Path certFile, Path keyFile, Path clientCaFile) {
        if (certFile == null && keyFile == null) {
            if (clientCaFile != null) {
                throw new IllegalArgumentException(CLIENT_CA_FLAG + " needs " + CERT_FLAG + " and " + KEY_FLAG
                        + " (expected: all three for mutual TLS, or the first two for TLS)");
            }
            return null;
        }
        if (certFile == null || keyFile == null) {
            String given = certFile == null ? KEY_FLAG : CERT_FLAG;
            String missing = certFile == null ? CERT_FLAG : KEY_FLAG;
            throw new IllegalArgumentException(given + " without " + missing + " (expected: both " + CERT_FLAG + " and "
                    + KEY_FLAG + ", or neither)");
        }
        return new TlsFiles(certFile, keyFile, clientCaFile);
    }

    /** Whether clients must present a certificate signed by {@link #clientCaFile()}. */
    public boolean mutual() {
        return clientCaFile != null;
    }
}
