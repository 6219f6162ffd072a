package io.watchfanout.common.tls;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The server's key manager: the certificate and key of {@code --tls-cert-file} and
 * {@code --tls-key-file} as they are on disk now ({@link ReloadingFiles}). Each handshake
 * chooses the current load's alias; its chain and key are then looked up by that alias, in the
 * current load or the one before, so a handshake that straddles a reload stays consistent.
 *
 * <p>Thread-safe: called by handshakes on any thread.
 */
final class ReloadingKeyManager extends X509ExtendedKeyManager {
    private final ReloadingFiles<CertifiedKey> loads;

    ReloadingKeyManager(ReloadingFiles<CertifiedKey> loads) {
        this.loads = loads;
    }

    /** The current load (looking at the files if it is time to). */
    CertifiedKey current() {
        return loads.current();
    }

    private CertifiedKey byAlias(String alias) {
        CertifiedKey current = loads.current();
        if (current.alias().equals(alias)) {
            return current;
        }
        CertifiedKey previous = loads.previous();
        return previous != null && previous.alias().equals(alias) ? previous : current;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return current().manager().getClientAliases(keyType, issuers);
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return current().manager().chooseClientAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return current().manager().chooseEngineClientAlias(keyType, issuers, engine);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return current().manager().getServerAliases(keyType, issuers);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return current().manager().chooseServerAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return current().manager().chooseEngineServerAlias(keyType, issuers, engine);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return byAlias(alias).manager().getCertificateChain(alias);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return byAlias(alias).manager().getPrivateKey(alias);
    }
}
