package io.watchfanout.common.tls;

import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The TLS material of a server's listeners, from {@code --tls-cert-file}, {@code --tls-key-file}
 * and, for mutual TLS, {@code --client-ca-file} ({@link TlsFiles}), reloaded from disk when the
 * files change: a certificate rotation needs no restart. Connections that are open keep the
 * certificate of their handshake; each new handshake looks (at most once a second) whether the
 * files changed, and uses the new certificate, key or CAs once they load. Files that do not
 * load (half written, a key of another certificate) are logged once and the previous material
 * stays in use.
 *
 * <p>One instance serves every listener of a process: Undertow and XNIO take
 * {@link #sslContext()} (with {@link #configure(SSLEngine)} on each server engine, or XNIO's
 * {@code SSL_CLIENT_AUTH_MODE} = {@code REQUIRED} when {@link #clientAuthRequired()}), netty takes
 * {@link #keyManager()} and {@link #trustManager()}
 * ({@code SslContextBuilder.forServer(keyManager).trustManager(trustManager)}).
 *
 * <p>Thread-safe.
 */
public final class ServerTls {
    /** The session value that says whether the peer's chain leads to {@code --client-ca-file}. */
    private static final String SIGNED_BY_CLIENT_CA = "io.watchfanout.signed-by-client-ca";

    /** The least time between two looks at the files. */
    static final Duration LOOK_INTERVAL = Duration.ofSeconds(1);

    private final TlsFiles files;
    private final ReloadingKeyManager keyManager;
    private final ReloadingTrustManager trustManager;
    private final SSLContext sslContext;
    /** With client CAs: a client without a certificate is let through (one with a bad one never is). */
    private final boolean clientCertificateOptional;

    private ServerTls(TlsFiles files, ReloadingKeyManager keyManager, ReloadingTrustManager trustManager) {
        this(files, keyManager, trustManager, false);
    }

    private ServerTls(
            TlsFiles files,
            ReloadingKeyManager keyManager,
            ReloadingTrustManager trustManager,
            boolean clientCertificateOptional) {
        this.files = files;
        this.keyManager = keyManager;
        this.trustManager = trustManager;
        this.clientCertificateOptional = clientCertificateOptional;
        try {
            sslContext = SSLContext.getInstance("TLS");
            sslContext.init(
                    new KeyManager[] {keyManager},
                    trustManager == null ? null : new TrustManager[] {trustManager},
                    null);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK has no TLS", e);
        }
    }

    /**
     * Reads and checks the files.
     *
     * @throws TlsMaterialException naming the flag and the file: a file missing or unreadable, PEM
     *     that does not parse, a key that is not the certificate's
     */
    public static ServerTls load(TlsFiles files) {
        return load(files, LOOK_INTERVAL, System::nanoTime);
    }

    /** As {@link #load(TlsFiles)}, looking at the files at most once per {@code interval} of {@code nanoTime}. */
    static ServerTls load(TlsFiles files, Duration interval, LongSupplier nanoTime) {
        AtomicLong loads = new AtomicLong();
        ReloadingFiles<CertifiedKey> keys = new ReloadingFiles<>(
                "the TLS certificate and key",
                List.of(files.certFile(), files.keyFile()),
                List.of(TlsFiles.CERT_FLAG, TlsFiles.KEY_FLAG),
                bytes -> CertifiedKey.load(files, bytes.get(0), bytes.get(1), "server-" + loads.incrementAndGet()),
                interval,
                nanoTime);
        ReloadingTrustManager trust = files.clientCaFile() == null
                ? null
                : new ReloadingTrustManager(new ReloadingFiles<>(
                        "the client CA bundle",
                        List.of(files.clientCaFile()),
                        List.of(TlsFiles.CLIENT_CA_FLAG),
                        bytes -> ClientCas.load(TlsFiles.CLIENT_CA_FLAG, files.clientCaFile(), bytes.get(0)),
                        interval,
                        nanoTime));
        return new ServerTls(files, new ReloadingKeyManager(keys), trust);
    }

    /**
     * The same material, whose handshakes also accept client certificates that lead to a CA of
     * {@code caFile} (reloaded when it changes, like {@code --client-ca-file}). Such a certificate
     * is not a user of its own: {@link #clientCertificates} leaves it out, and the authenticator
     * the bundle belongs to verifies it against its own CAs. This is kube-apiserver's handshake,
     * which trusts the union of {@code --client-ca-file} and {@code --requestheader-client-ca-file}
     * so that the front proxy needs no place in the users' CA bundle.
     *
     * @param flag the flag naming {@code caFile}, for messages
     * @throws TlsMaterialException naming the flag and the file when it does not load
     */
    public ServerTls alsoTrusting(Path caFile, String flag) {
        ReloadingFiles<ClientCas> bundle = new ReloadingFiles<>(
                "the CA bundle of " + flag,
                List.of(caFile),
                List.of(flag),
                bytes -> ClientCas.load(flag, caFile, bytes.get(0)),
                LOOK_INTERVAL,
                System::nanoTime);
        ReloadingTrustManager trust =
                (trustManager == null ? new ReloadingTrustManager(null) : trustManager).alsoTrusting(bundle);
        return new ServerTls(files, keyManager, trust, clientCertificateOptional);
    }

    /**
     * The client certificate chain of a connection, leaf first, when it leads to a CA of
     * {@code --client-ca-file}: the certificate that names a user (its common name) and groups
     * (its organizations). Empty without a session or a client certificate, and for a certificate
     * that the handshake accepted for another bundle ({@link #alsoTrusting}). Without other
     * bundles the handshake already verified the chain; with them the chain is verified once per
     * TLS session (the answer is kept in the session).
     *
     * @param session the connection's TLS session, or null on plaintext
     */
    public List<X509Certificate> clientCertificates(SSLSession session) {
        List<X509Certificate> chain = PeerCertificates.chain(session);
        if (chain.isEmpty() || trustManager == null || !trustManager.trustsOthers()) {
            return chain;
        }
        Object known = session.getValue(SIGNED_BY_CLIENT_CA);
        boolean signed;
        if (known instanceof Boolean b) {
            signed = b;
        } else {
            signed = trustManager.signedByClientCa(chain.toArray(new X509Certificate[0]));
            session.putValue(SIGNED_BY_CLIENT_CA, signed);
        }
        return signed ? chain : List.of();
    }

    /** The files this material comes from. */
    public TlsFiles files() {
        return files;
    }

    /**
     * A JSSE context whose key manager and trust manager are {@link #keyManager()} and
     * {@link #trustManager()}: its engines follow the files. Server engines made from it need
     * {@link #configure(SSLEngine)} to ask for client certificates.
     */
    public SSLContext sslContext() {
        return sslContext;
    }

    /** The reloading key manager of the server's certificate chain and key. */
    public X509ExtendedKeyManager keyManager() {
        return keyManager;
    }

    /**
     * The reloading trust manager of client certificates, or null without {@code --client-ca-file}
     * or another bundle ({@link #alsoTrusting}): clients are then not asked for a certificate.
     */
    public X509ExtendedTrustManager trustManager() {
        return trustManager;
    }

    /**
     * The same material, asking clients for a certificate without requiring one: a certificate
     * presented must still be signed by a client CA, or the handshake fails; a client without one
     * gets through the handshake and is left to the server's authentication (tokens, anonymous,
     * or 401), as kube-apiserver's "verify if given". For listeners that also take other
     * credentials, and whose health probes carry none.
     */
    public ServerTls withOptionalClientCertificates() {
        return new ServerTls(files, keyManager, trustManager, true);
    }

    /** Whether a client must present a certificate signed by a CA of {@code --client-ca-file}. */
    public boolean clientAuthRequired() {
        return files.clientCaFile() != null && !clientCertificateOptional;
    }

    /** Whether clients are asked for a certificate (there are client CAs), required or not. */
    public boolean asksForClientCertificates() {
        return trustManager != null;
    }

    /**
     * Makes a server engine of {@link #sslContext()} require a client certificate when
     * {@link #clientAuthRequired()}, or ask for one when {@link #asksForClientCertificates()}.
     */
    public void configure(SSLEngine engine) {
        engine.setUseClientMode(false);
        if (clientAuthRequired()) {
            engine.setNeedClientAuth(true);
        } else if (asksForClientCertificates()) {
            engine.setWantClientAuth(true);
        }
    }

    /** The server's certificate new handshakes present (looking at the files if it is time to). */
    public X509Certificate certificate() {
        return keyManager.current().leaf();
    }

    /** The certificate and whether client certificates are required, for log lines. */
    @Override
    public String toString() {
        String clients = files.clientCaFile() == null
                ? ""
                : clientAuthRequired()
                        ? "; client certificates required, signed by " + files.clientCaFile()
                        : "; client certificates verified when presented, signed by " + files.clientCaFile();
        return "TLS with " + keyManager.current() + clients
                + (trustManager != null && trustManager.trustsOthers()
                        ? "; certificates of other CA bundles accepted for their authenticators"
                        : "");
    }
}
