package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import com.google.protobuf.UnknownFieldSet;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthRoleGetRequest;
import io.etcd.jetcd.api.AuthRoleGetResponse;
import io.etcd.jetcd.api.AuthUserGetRequest;
import io.etcd.jetcd.api.AuthUserGetResponse;
import io.etcd.jetcd.api.AuthUserListRequest;
import io.etcd.jetcd.api.AuthUserListResponse;
import io.etcd.jetcd.api.Permission;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.watchfanout.common.KeyRange;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link EtcdRoles} with etcd 3.5's {@code AuthStatus}, served by an in-process stand-in (the
 * test etcd is 3.4, which has none): roles are read again only when the auth revision moved, and
 * disabled authentication allows everything, as etcd does.
 */
class EtcdRolesAuthStatusTest {
    private static final Duration REFRESH = Duration.ofSeconds(1);
    private static final KeyRange INSIDE = KeyRange.single(ByteString.copyFromUtf8("/a/x"));
    private static final Identity READER = Identity.of("reader", Identity.Method.ETCD);

    private final AtomicBoolean enabled = new AtomicBoolean(true);
    private final AtomicLong revision = new AtomicLong(7);
    private final AtomicInteger userLists = new AtomicInteger();
    private final AtomicReference<String> granted = new AtomicReference<>("/a/");
    private final AtomicLong nanos = new AtomicLong();
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void standIn() throws IOException {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(authService())
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.shutdownNow();
    }

    private ServerServiceDefinition authService() {
        ServerServiceDefinition roles = new AuthGrpc.AuthImplBase() {
            @Override
            public void userList(AuthUserListRequest request, StreamObserver<AuthUserListResponse> out) {
                userLists.incrementAndGet();
                out.onNext(AuthUserListResponse.newBuilder().addUsers("reader").build());
                out.onCompleted();
            }

            @Override
            public void userGet(AuthUserGetRequest request, StreamObserver<AuthUserGetResponse> out) {
                out.onNext(AuthUserGetResponse.newBuilder().addRoles("r").build());
                out.onCompleted();
            }

            @Override
            public void roleGet(AuthRoleGetRequest request, StreamObserver<AuthRoleGetResponse> out) {
                ByteString key = ByteString.copyFromUtf8(granted.get());
                out.onNext(AuthRoleGetResponse.newBuilder()
                        .addPerm(Permission.newBuilder()
                                .setPermType(Permission.Type.READ)
                                .setKey(key)
                                .setRangeEnd(KeyRange.prefixEnd(key)))
                        .build());
                out.onCompleted();
            }
        }.bindService();
        ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(AuthGrpc.SERVICE_NAME);
        roles.getMethods().forEach(b::addMethod);
        b.addMethod(EtcdAuthReader.AUTH_STATUS, ServerCalls.asyncUnaryCall((request, out) -> {
            out.onNext(authStatusResponse(enabled.get(), revision.get()));
            out.onCompleted();
        }));
        return b.build();
    }

    /** etcd's AuthStatusResponse: enabled = 2, auth_revision = 3. */
    private static Empty authStatusResponse(boolean enabled, long revision) {
        return Empty.newBuilder()
                .setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(
                                2,
                                UnknownFieldSet.Field.newBuilder()
                                        .addVarint(enabled ? 1 : 0)
                                        .build())
                        .addField(
                                3,
                                UnknownFieldSet.Field.newBuilder()
                                        .addVarint(revision)
                                        .build())
                        .build())
                .build();
    }

    private EtcdRoles roles() throws IOException {
        return EtcdRoles.load(new EtcdAuthReader(channel), REFRESH, nanos::get);
    }

    @Test
    void rolesAreReadAgainOnlyWhenTheAuthRevisionMoved() throws IOException {
        EtcdRoles policy = roles();
        assertThat(policy.allows(READER, Verb.READ, INSIDE)).isTrue();
        assertThat(userLists).hasValue(1);

        granted.set("/b/");
        nanos.addAndGet(REFRESH.toNanos());
        assertThat(policy.reload()).isFalse();
        assertThat(userLists).hasValue(1);

        revision.incrementAndGet();
        nanos.addAndGet(REFRESH.toNanos());
        assertThat(policy.reload()).isTrue();
        assertThat(userLists).hasValue(2);
        assertThat(policy.allows(READER, Verb.READ, INSIDE)).isFalse();
    }

    @Test
    void disabledAuthenticationAllowsEverything() throws IOException {
        enabled.set(false);
        EtcdRoles policy = roles();

        assertThat(policy.allows(Identity.ANONYMOUS, Verb.WRITE, KeyRange.all()))
                .isTrue();
        assertThat(policy.describe()).contains("disabled");
        nanos.addAndGet(REFRESH.toNanos());
        assertThat(policy.reload()).isFalse();

        enabled.set(true);
        revision.incrementAndGet();
        nanos.addAndGet(REFRESH.toNanos());
        assertThat(policy.reload()).isTrue();
        assertThat(policy.allows(Identity.ANONYMOUS, Verb.READ, INSIDE)).isFalse();
        assertThat(policy.allows(READER, Verb.READ, INSIDE)).isTrue();
    }

    @Test
    void anUnreachableEtcdAllowsNothingUntilTheRolesAreRead() throws IOException {
        server.shutdownNow();
        EtcdRoles policy = roles();
        assertThat(policy.allows(READER, Verb.READ, INSIDE)).isFalse();
        assertThat(policy.describe()).contains("not read yet");
    }
}
