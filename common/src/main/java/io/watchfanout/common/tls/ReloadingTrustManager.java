package io.watchfanout.common.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The trust manager of client certificates: the CAs of {@code --client-ca-file}, and of the
 * bundles of other authenticators whose clients present certificates too (kube-apiserver's front
 * proxy, {@code --requestheader-client-ca-file}), each as its file is on disk now
 * ({@link ReloadingFiles}) and checked by the JDK's PKIX trust manager. A client whose chain leads
 * to none of them fails the handshake; one whose chain leads to another bundle's CA gets through
 * the handshake but is not a user of its own ({@link #signedByClientCa}), as kube-apiserver's
 * handshake trusts the union of its CA bundles and each authenticator verifies against its own.
 *
 * <p>Thread-safe: called by handshakes on any thread.
 */
final class ReloadingTrustManager extends X509ExtendedTrustManager {
    /** {@code --client-ca-file}, or null when only other bundles ask for certificates. */
    private final ReloadingFiles<ClientCas> clientCas;

    private final List<ReloadingFiles<ClientCas>> others;

    ReloadingTrustManager(ReloadingFiles<ClientCas> clientCas) {
        this(clientCas, List.of());
    }

    private ReloadingTrustManager(ReloadingFiles<ClientCas> clientCas, List<ReloadingFiles<ClientCas>> others) {
        this.clientCas = clientCas;
        this.others = List.copyOf(others);
    }

    /** This trust manager, also trusting {@code bundle} in the handshake. */
    ReloadingTrustManager alsoTrusting(ReloadingFiles<ClientCas> bundle) {
        List<ReloadingFiles<ClientCas>> more = new ArrayList<>(others);
        more.add(bundle);
        return new ReloadingTrustManager(clientCas, more);
    }

    /** Whether the handshake trusts CAs besides {@code --client-ca-file}'s. */
    boolean trustsOthers() {
        return !others.isEmpty();
    }

    /** Whether {@code chain} (leaf first) leads to a CA of {@code --client-ca-file}. */
    boolean signedByClientCa(X509Certificate[] chain) {
        if (clientCas == null || chain.length == 0) {
            return false;
        }
        try {
            clientCas
                    .current()
                    .manager()
                    .checkClientTrusted(chain, chain[0].getPublicKey().getAlgorithm());
            return true;
        } catch (CertificateException e) {
            return false;
        }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        anyBundle(m -> m.checkClientTrusted(chain, authType, socket));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        anyBundle(m -> m.checkClientTrusted(chain, authType, engine));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        anyBundle(m -> m.checkClientTrusted(chain, authType));
    }

    /** A check by one bundle's trust manager. */
    private interface Check {
        void by(X509ExtendedTrustManager manager) throws CertificateException;
    }

    /** Passes when one bundle passes {@code check}; else throws the first bundle's refusal. */
    private void anyBundle(Check check) throws CertificateException {
        CertificateException refused = null;
        for (ReloadingFiles<ClientCas> bundle : bundles()) {
            try {
                check.by(bundle.current().manager());
                return;
            } catch (CertificateException e) {
                refused = refused == null ? e : refused;
            }
        }
        throw refused;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        first().checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        first().checkServerTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        first().checkServerTrusted(chain, authType);
    }

    /** Every CA a client certificate may lead to: the issuers a server names in its certificate request. */
    @Override
    public X509Certificate[] getAcceptedIssuers() {
        List<X509Certificate> issuers = new ArrayList<>();
        for (ReloadingFiles<ClientCas> bundle : bundles()) {
            issuers.addAll(List.of(bundle.current().manager().getAcceptedIssuers()));
        }
        return issuers.toArray(new X509Certificate[0]);
    }

    /** {@code --client-ca-file} first, then the others; never empty. */
    private List<ReloadingFiles<ClientCas>> bundles() {
        if (clientCas == null) {
            return others;
        }
        if (others.isEmpty()) {
            return List.of(clientCas);
        }
        List<ReloadingFiles<ClientCas>> all = new ArrayList<>(others.size() + 1);
        all.add(clientCas);
        all.addAll(others);
        return all;
    }

    private X509ExtendedTrustManager first() {
        return bundles().get(0).current().manager();
    }
}
