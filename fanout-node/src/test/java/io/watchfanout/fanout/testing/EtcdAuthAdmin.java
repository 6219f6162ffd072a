package io.watchfanout.fanout.testing;

import io.etcd.jetcd.api.AuthEnableRequest;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthRoleAddRequest;
import io.etcd.jetcd.api.AuthUserAddRequest;
import io.etcd.jetcd.api.AuthUserGrantRoleRequest;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;

/**
 * etcd's authentication for tests, with jetcd's generated API: users, roles, enabling it, and
 * channels that carry a user's token as clientv3 does (gRPC metadata {@code token}). Enable it
 * only on a test's own etcd: a shared one would refuse every other test.
 */
public final class EtcdAuthAdmin {
    private EtcdAuthAdmin() {}

    /** Adds {@code user} with {@code password} and grants it {@code roles} (adding each role first). */
    public static void addUser(Channel etcd, String user, String password, String... roles) {
        AuthGrpc.AuthBlockingStub auth = AuthGrpc.newBlockingStub(etcd);
        auth.userAdd(AuthUserAddRequest.newBuilder()
                .setName(user)
                .setPassword(password)
                .build());
        for (String role : roles) {
            auth.roleAdd(AuthRoleAddRequest.newBuilder().setName(role).build());
            auth.userGrantRole(AuthUserGrantRoleRequest.newBuilder()
                    .setUser(user)
                    .setRole(role)
                    .build());
        }
    }

    /** Adds user {@code root} with the {@code root} role, which etcd requires, and enables authentication. */
    public static void enable(Channel etcd, String rootPassword) {
        addUser(etcd, "root", rootPassword, "root");
        AuthGrpc.newBlockingStub(etcd).authEnable(AuthEnableRequest.getDefaultInstance());
    }

    /** The token etcd's {@code Authenticate} gives {@code user}. */
    public static String token(Channel etcd, String user, String password) {
        return AuthGrpc.newBlockingStub(etcd)
                .authenticate(AuthenticateRequest.newBuilder()
                        .setName(user)
                        .setPassword(password)
                        .build())
                .getToken();
    }

    /** {@code etcd} with {@code token} in the {@code token} metadata of every call. */
    public static Channel withToken(Channel etcd, String token) {
        Metadata.Key<String> key = Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);
        ClientInterceptor attach = new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(
                    MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        headers.put(key, token);
                        super.start(listener, headers);
                    }
                };
            }
        };
        return ClientInterceptors.intercept(etcd, attach);
    }
}
