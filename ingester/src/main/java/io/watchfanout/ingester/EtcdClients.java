package io.watchfanout.ingester;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.watchfanout.common.EtcdSecurity;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLException;

/**
 * Builds the ingester's one jetcd client from its settings: the endpoints, the message limit and
 * keepalive, and {@code --etcd-cacert}/{@code --etcd-cert}/{@code --etcd-key} (TLS) and
 * {@code --etcd-user} (jetcd authenticates, and again whenever etcd answers that the token is
 * invalid). Stateless.
 */
final class EtcdClients {
    private EtcdClients() {}

    /**
     * @param etcd the etcd source's endpoints, message bound and security
     * @param keepaliveTime gRPC keepalive ping interval
     * @param keepaliveTimeout how long a ping may go unanswered
     * @throws IllegalArgumentException when a certificate or key file cannot be read
     */
    static Client create(IngesterConfig.Etcd etcd, Duration keepaliveTime, Duration keepaliveTimeout) {
        ClientBuilder b = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .maxInboundMessageSize(etcd.maxInboundBytes())
                .keepaliveTime(keepaliveTime)
                .keepaliveTimeout(keepaliveTimeout);
        EtcdSecurity s = etcd.security();
        if (s.tls()) {
            try {
                b.sslContext(ssl -> {
                    if (s.caCert() != null) {
                        ssl.trustManager(s.caCert().toFile());
                    }
                    if (s.cert() != null) {
                        ssl.keyManager(s.cert().toFile(), s.key().toFile());
                    }
                });
            } catch (SSLException | IllegalArgumentException e) {
                throw new IllegalArgumentException("cannot use the etcd TLS files of " + s + ": " + e.getMessage(), e);
            }
        }
        if (s.authenticates()) {
            b.user(ByteSequence.from(s.user(), StandardCharsets.UTF_8))
                    .password(ByteSequence.from(s.password(), StandardCharsets.UTF_8));
        }
        return b.build();
    }
}
