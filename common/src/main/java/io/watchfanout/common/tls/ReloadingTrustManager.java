package io.watchfanout.common.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The trust manager of client certificates: the CAs of {@code --client-ca-file} as the file is
 * on disk now ({@link ReloadingFiles}), checked by the JDK's PKIX trust manager. A client whose
 * chain does not lead to one of them fails the handshake.
 *
 * <p>Thread-safe: called by handshakes on any thread.
 */
final class ReloadingTrustManager extends X509ExtendedTrustManager {
    private final ReloadingFiles<ClientCas> loads;

    ReloadingTrustManager(ReloadingFiles<ClientCas> loads) {
        this.loads = loads;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        loads.current().manager().checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        loads.current().manager().checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        loads.current().manager().checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        loads.current().manager().checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        loads.current().manager().checkServerTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        loads.current().manager().checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return loads.current().manager().getAcceptedIssuers();
    }
}
