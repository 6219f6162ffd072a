package io.watchfanout.fanout.security;

import com.google.protobuf.Empty;
import com.google.protobuf.UnknownFieldSet;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthRoleGetRequest;
import io.etcd.jetcd.api.AuthUserGetRequest;
import io.etcd.jetcd.api.AuthUserListRequest;
import io.etcd.jetcd.api.Permission;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Reads etcd's users, roles and auth status with the node's channel to etcd (which carries the
 * node's own credentials; reading users and roles needs etcd's {@code root} role). Blocking,
 * each call bounded by {@link #CALL_TIMEOUT}; runs at startup and on the security thread.
 *
 * <p>Thread-safe (grpc's channel is).
 */
final class EtcdAuthReader {
    /** The longest one call to etcd may take. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);

    /**
     * etcd's {@code AuthStatus} (etcd 3.5 and newer), which jetcd's generated API predates: the
     * request is empty, and the response's {@code enabled = 2} and {@code auth_revision = 3} are
     * read from an {@link Empty}'s unknown fields.
     */
    static final MethodDescriptor<Empty, Empty> AUTH_STATUS = MethodDescriptor.<Empty, Empty>newBuilder()
            .setFullMethodName("etcdserverpb.Auth/AuthStatus")
            .setType(MethodDescriptor.MethodType.UNARY)
            .setRequestMarshaller(ProtoUtils.marshaller(Empty.getDefaultInstance()))
            .setResponseMarshaller(ProtoUtils.marshaller(Empty.getDefaultInstance()))
            .build();

    /**
     * etcd's answer to {@code AuthStatus}.
     *
     * @param enabled whether etcd checks permissions
     * @param revision etcd's auth revision, which every change of users, roles or permissions moves
     */
    record AuthStatus(boolean enabled, long revision) {}

    private final Channel etcd;

    EtcdAuthReader(Channel etcd) {
        this.etcd = etcd;
    }

    /**
     * etcd's auth status, or null when etcd predates {@code AuthStatus} (before 3.5: its auth is
     * then taken as enabled and its roles read on every refresh).
     *
     * @throws StatusRuntimeException when etcd cannot be asked
     */
    AuthStatus status() {
        Empty response;
        try {
            response = ClientCalls.blockingUnaryCall(etcd, AUTH_STATUS, options(), Empty.getDefaultInstance());
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.UNIMPLEMENTED) {
                return null;
            }
            throw e;
        }
        UnknownFieldSet fields = response.getUnknownFields();
        return new AuthStatus(last(fields, 2) != 0, last(fields, 3));
    }

    private static long last(UnknownFieldSet fields, int number) {
        if (!fields.hasField(number)) {
            return 0;
        }
        List<Long> values = fields.getField(number).getVarintList();
        return values.isEmpty() ? 0 : values.get(values.size() - 1);
    }

    /**
     * Every user's roles and every role's permissions.
     *
     * @throws StatusRuntimeException when etcd cannot be asked or refuses (the node's user is not root)
     */
    EtcdPermissions permissions() {
        Map<String, Set<String>> users = new HashMap<>();
        Map<String, List<Permission>> roles = new HashMap<>();
        for (String user :
                stub().userList(AuthUserListRequest.getDefaultInstance()).getUsersList()) {
            List<String> named = stub().userGet(
                            AuthUserGetRequest.newBuilder().setName(user).build())
                    .getRolesList();
            users.put(user, new LinkedHashSet<>(named));
            for (String role : named) {
                if (!roles.containsKey(role) && !role.equals(EtcdPermissions.ROOT_ROLE)) {
                    roles.put(
                            role,
                            stub().roleGet(AuthRoleGetRequest.newBuilder()
                                            .setRole(role)
                                            .build())
                                    .getPermList());
                }
            }
        }
        return new EtcdPermissions(users, roles);
    }

    private AuthGrpc.AuthBlockingStub stub() {
        return AuthGrpc.newBlockingStub(etcd).withDeadlineAfter(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
}
