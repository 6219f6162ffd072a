package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PkiTest {
    @TempDir
    Path dir;

    private static X509Certificate read(Path pem) throws Exception {
        try (InputStream in = Files.newInputStream(pem)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    @Test
    void issuesCertificatesTheCaSignedWithLoadableKeys() throws Exception {
        Pki pki = Pki.create(dir, "ca");
        Pki.Issued server = pki.server("node", "node-1", "node.example");
        Pki.Issued client = pki.client("alice", "alice", "readers");
        X509Certificate ca = read(pki.caCert());
        X509Certificate s = read(server.cert());
        X509Certificate c = read(client.cert());
        s.verify(ca.getPublicKey());
        c.verify(ca.getPublicKey());
        assertThat(c.getSubjectX500Principal().getName()).isEqualTo("O=readers,CN=alice");
        assertThat(s.getSubjectAlternativeNames())
                .extracting(n -> (Object) n.get(1))
                .contains((Object) "localhost", "127.0.0.1", "node.example");
        String key = Files.readString(client.key(), StandardCharsets.US_ASCII);
        assertThat(key).startsWith("-----BEGIN PRIVATE KEY-----");
        byte[] der = Base64.getMimeDecoder()
                .decode(key.replace("-----BEGIN PRIVATE KEY-----", "").replace("-----END PRIVATE KEY-----", ""));
        assertThat(KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der)))
                .isNotNull();
    }

    @Test
    void anExpiredClientCertificateFailsItsValidityCheck() throws Exception {
        Pki pki = Pki.create(dir, "ca");
        Pki.Issued old = pki.client("old", "old", Instant.now().minus(Duration.ofDays(3)), Duration.ofDays(1));
        assertThatThrownBy(() -> read(old.cert()).checkValidity()).isInstanceOf(CertificateExpiredException.class);
    }
}
