package io.watchfanout.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway certificate authority that writes PEM files: its own certificate, and server and
 * client certificates it signs, for tests with real TLS and for {@code bin/local-stack --secure}.
 * Keys are EC P-256 (what etcd, Kafka, grpc-netty, Undertow, curl and Node.js all take), private
 * keys unencrypted PKCS#8 ({@code -----BEGIN PRIVATE KEY-----}), as etcd's {@code --key-file},
 * Kafka's PEM key stores and the node's {@code --tls-key-file} read them.
 *
 * <p>Server certificates name {@code localhost}, {@code 127.0.0.1} and {@code ::1} besides the
 * names given, so that a client connecting to a loopback address verifies the host name.
 * Client certificates carry the identity in the subject's common name (etcd's
 * {@code --client-cert-auth}: identity = CN) and, optionally, groups as organisations
 * (Kubernetes' convention: {@code O=} is a group).
 *
 * <p>Files are replaced atomically (written beside, then moved), so that a server watching a
 * file for rotation never reads half of one. Thread-safe.
 */
public final class Pki {
    private static final String SIGNATURE = "SHA256withECDSA";
    private static final Duration DEFAULT_VALIDITY = Duration.ofDays(2);
    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    private final Path dir;
    private final String name;
    private final KeyPair caKeys;
    private final X509Certificate caCert;

    private Pki(Path dir, String name, KeyPair caKeys, X509Certificate caCert) {
        this.dir = dir;
        this.name = name;
        this.caKeys = caKeys;
        this.caCert = caCert;
    }

    /** A certificate and its private key, as PEM files. */
    public record Issued(Path cert, Path key) {}

    /**
     * A new CA whose certificate is {@code <dir>/<name>.pem} (its key stays in memory).
     *
     * @param name the CA's common name and file name, e.g. {@code ca}
     * @throws UncheckedIOException if the directory cannot be written
     */
    public static Pki create(Path dir, String name) {
        try {
            Files.createDirectories(dir);
            KeyPair keys = newKeys();
            X500Name subject = new X500Name("CN=" + name);
            Instant now = Instant.now();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                    subject,
                    serial(),
                    Date.from(now.minus(Duration.ofMinutes(5))),
                    Date.from(now.plus(Duration.ofDays(30))),
                    subject,
                    keys.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
            X509Certificate cert = sign(b, keys.getPrivate());
            Pki pki = new Pki(dir, name, keys, cert);
            pki.writePem(dir.resolve(name + ".pem"), cert);
            return pki;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make a CA", e);
        }
    }

    /**
     * The CA of {@code <dir>/<name>.pem} and {@code <dir>/<name>-key.pem} when both exist (an
     * earlier {@code open} wrote them), else a new one whose key is kept there too (owner-only), so
     * that certificates issued across restarts share one CA and copies of its certificate held by
     * clients stay valid.
     *
     * @throws UncheckedIOException if the files cannot be read or written
     */
    public static Pki open(Path dir, String name) {
        Path cert = dir.resolve(name + ".pem");
        Path key = dir.resolve(name + "-key.pem");
        try {
            if (Files.isRegularFile(cert) && Files.isRegularFile(key)) {
                X509Certificate caCert;
                try (InputStream in = Files.newInputStream(cert)) {
                    caCert = (X509Certificate)
                            CertificateFactory.getInstance("X.509").generateCertificate(in);
                }
                PrivateKey caKey;
                try (org.bouncycastle.openssl.PEMParser parser = new org.bouncycastle.openssl.PEMParser(
                        Files.newBufferedReader(key, StandardCharsets.US_ASCII))) {
                    caKey = new org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter()
                            .getPrivateKey((org.bouncycastle.asn1.pkcs.PrivateKeyInfo) parser.readObject());
                }
                return new Pki(dir, name, new KeyPair(caCert.getPublicKey(), caKey), caCert);
            }
            Pki pki = create(dir, name);
            pki.writePem(key, new JcaPKCS8Generator(pki.caKeys.getPrivate(), null).generate());
            return pki;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | ClassCastException e) {
            throw new IllegalStateException("cannot read the CA of " + cert + " and " + key, e);
        }
    }

    /** The CA's certificate file ({@code --client-ca-file}, etcd's {@code --trusted-ca-file}, curl's {@code --cacert}). */
    public Path caCert() {
        return dir.resolve(name + ".pem");
    }

    /** The CA's certificate. */
    public X509Certificate caCertificate() {
        return caCert;
    }

    /**
     * A server certificate for {@code commonName}, valid for two days, with {@code localhost} and the
     * loopback addresses plus {@code hosts} (DNS names or IP literals) as subject alternative names;
     * files {@code <dir>/<file>.pem} and {@code <dir>/<file>-key.pem}, replaced if present.
     */
    public Issued server(String file, String commonName, String... hosts) {
        List<GeneralName> names = new ArrayList<>();
        names.add(new GeneralName(GeneralName.dNSName, "localhost"));
        names.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
        names.add(new GeneralName(GeneralName.iPAddress, "::1"));
        for (String h : hosts) {
            names.add(new GeneralName(isIpLiteral(h) ? GeneralName.iPAddress : GeneralName.dNSName, h));
        }
        return issue(
                file,
                "CN=" + commonName,
                names,
                // etcd uses its server certificate as a client of its peers and of itself (grpc-gateway).
                new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth},
                Instant.now().minus(Duration.ofMinutes(5)),
                DEFAULT_VALIDITY);
    }

    /**
     * A client certificate with {@code CN=commonName} and one {@code O=} per group, valid for two
     * days; files {@code <dir>/<file>.pem} and {@code <dir>/<file>-key.pem}.
     */
    public Issued client(String file, String commonName, String... groups) {
        return client(file, commonName, Instant.now().minus(Duration.ofMinutes(5)), DEFAULT_VALIDITY, groups);
    }

    /**
     * A client certificate valid from {@code notBefore} for {@code validity} (in the past for an
     * expired one), otherwise as {@link #client(String, String, String...)}.
     */
    public Issued client(String file, String commonName, Instant notBefore, Duration validity, String... groups) {
        StringBuilder subject = new StringBuilder("CN=").append(commonName);
        for (String g : groups) {
            subject.append(",O=").append(g);
        }
        return issue(
                file,
                subject.toString(),
                List.of(),
                new KeyPurposeId[] {KeyPurposeId.id_kp_clientAuth},
                notBefore,
                validity);
    }

    private Issued issue(
            String file,
            String subject,
            List<GeneralName> altNames,
            KeyPurposeId[] purposes,
            Instant notBefore,
            Duration validity) {
        Objects.requireNonNull(file, "file");
        try {
            KeyPair keys = newKeys();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                    caCert,
                    serial(),
                    Date.from(notBefore),
                    Date.from(notBefore.plus(validity)),
                    new X500Name(subject),
                    keys.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes));
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(caCert));
            if (!altNames.isEmpty()) {
                b.addExtension(
                        Extension.subjectAlternativeName,
                        false,
                        new GeneralNames(altNames.toArray(new GeneralName[0])));
            }
            X509Certificate cert = sign(b, caKeys.getPrivate());
            Issued issued = new Issued(dir.resolve(file + ".pem"), dir.resolve(file + "-key.pem"));
            writePem(issued.key(), new JcaPKCS8Generator(keys.getPrivate(), null).generate());
            writePem(issued.cert(), cert);
            return issued;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot issue a certificate for " + subject, e);
        }
    }

    private static KeyPair newKeys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIALS.incrementAndGet());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey key)
            throws OperatorCreationException, GeneralSecurityException {
        ContentSigner signer = new JcaContentSignerBuilder(SIGNATURE).build(key);
        return new JcaX509CertificateConverter().getCertificate(b.build(signer));
    }

    private void writePem(Path file, Object pem) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.US_ASCII);
                JcaPEMWriter pw = new JcaPEMWriter(w)) {
            pw.writeObject(pem);
        }
        if (file.getFileName().toString().endsWith("-key.pem")) {
            ownerOnly(tmp);
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Makes {@code file} readable and writable by its owner only, where the file system has POSIX permissions. */
    public static void ownerOnly(Path file) throws IOException {
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system: its own defaults apply.
        }
    }

    private static boolean isIpLiteral(String host) {
        if (!host.matches("[0-9.]+|[0-9a-fA-F:]+")) {
            return false;
        }
        try {
            InetAddress.getByName(host);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
