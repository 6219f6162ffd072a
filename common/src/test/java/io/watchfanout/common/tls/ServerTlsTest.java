package io.watchfanout.common.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.TlsClientContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ServerTls} over a real TLS socket: the certificate presented, a rotation picked up by
 * the next handshake once the look interval has passed (a fake clock: no waiting), a bad
 * rotation that keeps the old certificate, mutual TLS, and the startup errors that name the flag.
 */
class ServerTlsTest {
    @TempDir
    Path dir;

    private final AtomicLong nanos = new AtomicLong();
    private final ExecutorService acceptor = Executors.newSingleThreadExecutor();
    private Pki pki;

    @BeforeEach
    void ca() {
        pki = Pki.create(dir, "ca");
    }

    @AfterEach
    void stop() {
        acceptor.shutdownNow();
    }

    private ServerTls load(Pki.Issued server, Path clientCa) {
        return ServerTls.load(new TlsFiles(server.cert(), server.key(), clientCa), Duration.ofSeconds(1), nanos::get);
    }

    /**
     * Serves one connection with {@code tls}: handshake, then the peer's common name (or "-")
     * as one line; returns the serial of the certificate the client was shown.
     */
    private BigInteger handshake(ServerTls tls, SSLContext client) throws Exception {
        try (SSLServerSocket server =
                (SSLServerSocket) tls.sslContext().getServerSocketFactory().createServerSocket(0)) {
            if (tls.clientAuthRequired()) {
                server.setNeedClientAuth(true);
            } else {
                server.setWantClientAuth(tls.asksForClientCertificates());
            }
            Future<String> peer = acceptor.submit(() -> {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                    s.startHandshake();
                    String cn = PeerCertificates.commonName(s.getSession());
                    try (OutputStream out = s.getOutputStream()) {
                        out.write(((cn == null ? "-" : cn) + "\n").getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    }
                    return cn;
                }
            });
            try (SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", server.getLocalPort())) {
                s.startHandshake();
                InputStream in = s.getInputStream();
                String line = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                assertThat(line).endsWith("\n");
                BigInteger serial = ((java.security.cert.X509Certificate)
                                s.getSession().getPeerCertificates()[0])
                        .getSerialNumber();
                peer.get(30, TimeUnit.SECONDS);
                return serial;
            }
        }
    }

    @Test
    void presentsTheCertificateAndPicksUpARotationAfterTheLookInterval() throws Exception {
        Pki.Issued server = pki.server("server", "node-a");
        ServerTls tls = load(server, null);
        SSLContext client = TlsClientContext.of(pki.caCert(), null);
        BigInteger first = handshake(tls, client);
        assertThat(first).isEqualTo(tls.certificate().getSerialNumber());
        assertThat(PeerCertificates.commonName(tls.certificate())).isEqualTo("node-a");

        pki.server("server", "node-b");
        assertThat(handshake(tls, client)).as("within the look interval").isEqualTo(first);
        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        BigInteger second = handshake(tls, client);
        assertThat(second).isNotEqualTo(first);
        assertThat(PeerCertificates.commonName(tls.certificate())).isEqualTo("node-b");
    }

    @Test
    void aBadRotationKeepsTheCurrentCertificateUntilAGoodOneArrives() throws Exception {
        Pki.Issued server = pki.server("server", "node-a");
        ServerTls tls = load(server, null);
        SSLContext client = TlsClientContext.of(pki.caCert(), null);
        BigInteger first = handshake(tls, client);

        // half a certificate
        String pem = Files.readString(server.cert());
        Files.writeString(server.cert(), pem.substring(0, pem.length() / 2));
        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(handshake(tls, client)).isEqualTo(first);

        // a whole certificate with the key of another
        Pki.Issued other = pki.server("other", "node-x");
        Files.copy(other.cert(), server.cert(), StandardCopyOption.REPLACE_EXISTING);
        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(handshake(tls, client)).isEqualTo(first);

        // and its own key: the pair loads
        Files.copy(other.key(), server.key(), StandardCopyOption.REPLACE_EXISTING);
        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(PeerCertificates.commonName(tls.certificate())).isEqualTo("node-x");
        assertThat(handshake(tls, client)).isNotEqualTo(first);
    }

    @Test
    void mutualTlsServesClientsOfTheCaAndNamesThem() throws Exception {
        Pki.Issued server = pki.server("server", "node-a");
        ServerTls tls = load(server, pki.caCert());
        Pki.Issued alice = pki.client("alice", "alice", "admins");
        assertThat(tls.clientAuthRequired()).isTrue();
        try (SSLServerSocket s =
                (SSLServerSocket) tls.sslContext().getServerSocketFactory().createServerSocket(0)) {
            s.setNeedClientAuth(true);
            Future<String> peer = acceptor.submit(() -> {
                try (SSLSocket c = (SSLSocket) s.accept()) {
                    c.startHandshake();
                    return PeerCertificates.commonName(c.getSession());
                }
            });
            try (SSLSocket c = (SSLSocket) TlsClientContext.of(pki.caCert(), alice)
                    .getSocketFactory()
                    .createSocket("127.0.0.1", s.getLocalPort())) {
                c.startHandshake();
                assertThat(peer.get(30, TimeUnit.SECONDS)).isEqualTo("alice");
                assertThat(PeerCertificates.commonName(c.getSession())).isEqualTo("node-a");
            }
        }
    }

    @Test
    void mutualTlsRefusesClientsWithoutACertificateOrOfAnotherCa() throws Exception {
        ServerTls tls = load(pki.server("server", "node-a"), pki.caCert());
        Pki other = Pki.create(dir.resolve("other"), "other-ca");
        Pki.Issued mallory = other.client("mallory", "mallory");
        // mallory trusts our CA (to verify the server) but holds a certificate of another
        SSLContext otherCa = TlsClientContext.of(pki.caCert(), mallory);
        SSLContext none = TlsClientContext.of(pki.caCert(), null);
        for (SSLContext client : new SSLContext[] {none, otherCa}) {
            assertThatThrownBy(() -> handshake(tls, client)).isInstanceOf(IOException.class);
        }
    }

    @Test
    void optionalClientCertificatesLetClientsWithoutOneThroughButNeverOneOfAnotherCa() throws Exception {
        ServerTls tls = load(pki.server("server", "node-a"), pki.caCert()).withOptionalClientCertificates();
        assertThat(tls.clientAuthRequired()).isFalse();
        assertThat(tls.asksForClientCertificates()).isTrue();
        handshake(tls, TlsClientContext.of(pki.caCert(), null));
        handshake(tls, TlsClientContext.of(pki.caCert(), pki.client("alice", "alice")));
        Pki other = Pki.create(dir.resolve("other"), "other-ca");
        SSLContext otherCa = TlsClientContext.of(pki.caCert(), other.client("mallory", "mallory"));
        assertThatThrownBy(() -> handshake(tls, otherCa)).isInstanceOf(IOException.class);
    }

    @Test
    void expiredNotYetValidAndSelfSignedClientCertificatesAreRefusedInTheHandshake() throws Exception {
        ServerTls required = load(pki.server("server", "node-a"), pki.caCert());
        ServerTls optional = required.withOptionalClientCertificates();
        java.time.Instant now = java.time.Instant.now();
        Pki.Issued expired = pki.client("expired", "alice", now.minus(Duration.ofDays(3)), Duration.ofDays(1));
        Pki.Issued future = pki.client("future", "alice", now.plus(Duration.ofDays(1)), Duration.ofDays(1));
        // Its own CA: a certificate that names alice but no CA of ours signed.
        Pki.Issued selfMade = Pki.create(dir.resolve("self"), "alice").client("self", "alice");
        for (ServerTls tls : new ServerTls[] {required, optional}) {
            for (Pki.Issued bad : new Pki.Issued[] {expired, future, selfMade}) {
                SSLContext client = TlsClientContext.of(pki.caCert(), bad);
                assertThatThrownBy(() -> handshake(tls, client))
                        .as(bad.cert() + " against " + tls)
                        .isInstanceOf(IOException.class);
            }
        }
    }

    @Test
    void startupErrorsNameTheFlagAndTheFile() throws IOException {
        Pki.Issued a = pki.server("a", "a");
        Pki.Issued b = pki.server("b", "b");
        assertThatThrownBy(() -> load(new Pki.Issued(dir.resolve("missing.pem"), a.key()), null))
                .isInstanceOf(TlsMaterialException.class)
                .hasMessage("--tls-cert-file " + dir.resolve("missing.pem") + ": no such file");
        assertThatThrownBy(() -> load(new Pki.Issued(a.cert(), b.key()), null))
                .isInstanceOf(TlsMaterialException.class)
                .hasMessageStartingWith("--tls-key-file " + b.key() + ": not the private key of the certificate in "
                        + "--tls-cert-file " + a.cert());
        assertThatThrownBy(() -> load(a, dir.resolve("nothing.pem")))
                .isInstanceOf(TlsMaterialException.class)
                .hasMessage("--client-ca-file " + dir.resolve("nothing.pem") + ": no such file");
        Path sec1 = dir.resolve("sec1-key.pem");
        Files.writeString(sec1, "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
        assertThatThrownBy(() -> load(new Pki.Issued(a.cert(), sec1), null))
                .hasMessageStartingWith("--tls-key-file " + sec1 + ": a key in another format (expected: an "
                        + "unencrypted PKCS#8 PEM key");
        Path garbage = dir.resolve("garbage.pem");
        Files.writeString(garbage, "not a certificate\n");
        assertThatThrownBy(() -> load(new Pki.Issued(garbage, a.key()), null))
                .hasMessage(
                        "--tls-cert-file " + garbage + ": no certificate (expected: PEM, -----BEGIN CERTIFICATE-----)");
        assertThat(load(a, null).toString()).contains("CN=a");
    }

    @Test
    void noSessionNoName() {
        assertThat(PeerCertificates.commonName((javax.net.ssl.SSLSession) null)).isNull();
        assertThat(PeerCertificates.chain(null)).isEmpty();
    }

    @Test
    void tlsFilesAreBothOrNeither() {
        Path c = dir.resolve("c");
        Path k = dir.resolve("k");
        assertThat(TlsFiles.of(null, null, null)).isNull();
        assertThat(TlsFiles.of(c, k, null).mutual()).isFalse();
        assertThat(TlsFiles.of(c, k, c).mutual()).isTrue();
        assertThatThrownBy(() -> TlsFiles.of(c, null, null))
                .hasMessage("--tls-cert-file without --tls-key-file (expected: both --tls-cert-file and "
                        + "--tls-key-file, or neither)");
        assertThatThrownBy(() -> TlsFiles.of(null, k, null))
                .hasMessageStartingWith("--tls-key-file without --tls-cert-file");
        assertThatThrownBy(() -> TlsFiles.of(null, null, c)).hasMessageStartingWith("--client-ca-file needs");
    }
}
