package io.watchfanout.fanout.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.etcd.jetcd.api.AuthenticateResponse;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.EtcdTokens;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.testing.EtcdAuthAdmin;
import io.watchfanout.testkit.EtcdServer;
import java.io.IOException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A forwarded {@code Auth/Authenticate} tells {@link EtcdTokens} the token etcd issued, and the
 * client gets etcd's answer unchanged. A real etcd with authentication, this class's own.
 */
class EtcdForwarderAuthenticateTest {
    private static EtcdServer etcd;
    private static ManagedChannel toEtcd;
    private static Server node;
    private static ManagedChannel toNode;
    private static final EtcdTokens TOKENS = new EtcdTokens();

    @BeforeAll
    static void start() throws IOException {
        etcd = EtcdServer.builder().build().start();
        toEtcd = NettyChannelBuilder.forTarget("127.0.0.1:" + etcd.clientPort())
                .usePlaintext()
                .build();
        EtcdAuthAdmin.enable(toEtcd, "rootpw");
        String name = InProcessServerBuilder.generateName();
        node = InProcessServerBuilder.forName(name)
                .fallbackHandlerRegistry(new EtcdForwarder(
                        toEtcd,
                        () -> {},
                        new ForwardedAccess(io.watchfanout.fanout.security.AccessControl.open(
                                "forwarder-test", io.watchfanout.fanout.security.WatchLimits.NONE)),
                        TOKENS))
                .build()
                .start();
        toNode = InProcessChannelBuilder.forName(name).build();
    }

    @AfterAll
    static void stop() {
        if (toNode != null) {
            toNode.shutdownNow();
            node.shutdownNow();
        }
        if (toEtcd != null) {
            toEtcd.shutdownNow();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    @Test
    void theTokenOfAForwardedAuthenticateIsAccepted() throws Exception {
        AuthenticateResponse response = AuthGrpc.newBlockingStub(toNode)
                .authenticate(AuthenticateRequest.newBuilder()
                        .setName("root")
                        .setPassword("rootpw")
                        .build());

        assertThat(response.getToken()).isNotEmpty();
        assertThat(TOKENS.authenticate(new Credentials(null, null, response.getToken())))
                .isEqualTo(Identity.of("root", Identity.Method.ETCD));
    }

    @Test
    void aRefusedAuthenticateIsEtcdsAnswer() {
        assertThatThrownBy(() -> AuthGrpc.newBlockingStub(toNode)
                        .authenticate(AuthenticateRequest.newBuilder()
                                .setName("root")
                                .setPassword("wrong")
                                .build()))
                .isInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("authentication failed");
    }
}
