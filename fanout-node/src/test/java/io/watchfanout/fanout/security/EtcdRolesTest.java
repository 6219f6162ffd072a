package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthRoleGrantPermissionRequest;
import io.etcd.jetcd.api.AuthRoleRevokePermissionRequest;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.Permission;
import io.etcd.jetcd.api.RangeRequest;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.testing.EtcdAuthAdmin;
import io.watchfanout.testkit.EtcdServer;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link EtcdRoles} against a real etcd with authentication enabled: for each request, the
 * policy's answer is etcd's own answer to the same Range as the same user. The etcd is this
 * class's own (enabling authentication would break every other test of a shared one).
 */
class EtcdRolesTest {
    private static final String PREFIX = "/registry/configmaps/";
    private static final Duration REFRESH = Duration.ofSeconds(5);

    private static EtcdServer etcd;
    private static ManagedChannel plain;
    private static Channel asRoot;
    private static Channel asReader;

    private final AtomicLong nanos = new AtomicLong();

    @BeforeAll
    static void etcdWithAuth() {
        etcd = EtcdServer.builder().build().start();
        plain = NettyChannelBuilder.forTarget("127.0.0.1:" + etcd.clientPort())
                .usePlaintext()
                .build();
        EtcdAuthAdmin.addUser(plain, "reader", "readerpw", "configmap-reader");
        AuthGrpc.newBlockingStub(plain)
                .roleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder()
                        .setName("configmap-reader")
                        .setPerm(prefixPermission(PREFIX))
                        .build());
        EtcdAuthAdmin.enable(plain, "rootpw");
        asRoot = EtcdAuthAdmin.withToken(plain, EtcdAuthAdmin.token(plain, "root", "rootpw"));
        asReader = EtcdAuthAdmin.withToken(plain, EtcdAuthAdmin.token(plain, "reader", "readerpw"));
    }

    @AfterAll
    static void stop() {
        if (plain != null) {
            plain.shutdownNow();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    private static Permission prefixPermission(String prefix) {
        ByteString key = ByteString.copyFromUtf8(prefix);
        return Permission.newBuilder()
                .setPermType(Permission.Type.READ)
                .setKey(key)
                .setRangeEnd(KeyRange.prefixEnd(key))
                .build();
    }

    private static ByteString k(String s) {
        return ByteString.copyFromUtf8(s);
    }

    /** What etcd answers {@code reader} for a Range of {@code [key, rangeEnd)}: allowed or PERMISSION_DENIED. */
    private static boolean etcdAllowsReader(ByteString key, ByteString rangeEnd) {
        try {
            KVGrpc.newBlockingStub(asReader)
                    .range(RangeRequest.newBuilder()
                            .setKey(key)
                            .setRangeEnd(rangeEnd)
                            .setLimit(1)
                            .build());
            return true;
        } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).as(e.getStatus().toString()).isEqualTo(Status.Code.PERMISSION_DENIED);
            return false;
        }
    }

    private EtcdRoles roles() throws IOException {
        return EtcdRoles.load(new EtcdAuthReader(asRoot), REFRESH, nanos::get);
    }

    @Test
    void thePolicyAnswersAsEtcdDoes() throws IOException {
        ByteString prefix = k(PREFIX);
        ByteString all = ByteString.copyFrom(new byte[] {0});
        Map<String, ByteString[]> requests = new LinkedHashMap<>();
        requests.put("the granted prefix", new ByteString[] {prefix, KeyRange.prefixEnd(prefix)});
        requests.put("a key inside", new ByteString[] {k(PREFIX + "default/kube-root-ca"), ByteString.EMPTY});
        requests.put("a single key outside", new ByteString[] {k("/registry/secrets/default/token"), ByteString.EMPTY});
        requests.put("the whole keyspace", new ByteString[] {all, all});
        requests.put("the prefix with range end \\0", new ByteString[] {prefix, all});
        requests.put("from inside with range end \\0", new ByteString[] {k(PREFIX + "m"), all});
        requests.put("starting inside, ending outside", new ByteString[] {k(PREFIX + "m"), k("/registry/namespaces/")});
        requests.put("a sub-prefix", new ByteString[] {k(PREFIX + "kube-system/"), k(PREFIX + "kube-system0")});
        requests.put("the prefix key alone", new ByteString[] {prefix, ByteString.EMPTY});
        requests.put("just before the prefix", new ByteString[] {k("/registry/configmaps."), ByteString.EMPTY});
        EtcdRoles policy = roles();
        Identity reader = Identity.of("reader", Identity.Method.ETCD);

        Map<String, Boolean> expected = new LinkedHashMap<>();
        Map<String, Boolean> actual = new LinkedHashMap<>();
        requests.forEach((name, r) -> {
            expected.put(name, etcdAllowsReader(r[0], r[1]));
            actual.put(name, policy.allows(reader, Verb.READ, request(r[0], r[1])));
        });

        assertThat(actual).isEqualTo(expected);
        assertThat(expected).containsEntry("the granted prefix", true).containsEntry("the whole keyspace", false);
    }

    /** The node's normalised range of an etcd request (key "\0" to range end "\0" is every key). */
    private static KeyRange request(ByteString key, ByteString rangeEnd) {
        KeyRange r = KeyRange.of(key, rangeEnd);
        return key.equals(ByteString.copyFrom(new byte[] {0})) && r.end() == null ? KeyRange.all() : r;
    }

    @Test
    void readGrantsWatchButNotWrite_rootMayDoEverything_unknownUsersNothing() throws IOException {
        EtcdRoles policy = roles();
        KeyRange inside = KeyRange.single(k(PREFIX + "a"));

        assertThat(policy.allows(Identity.of("reader", Identity.Method.CERTIFICATE), Verb.WATCH, inside))
                .isTrue();
        assertThat(policy.allows(Identity.of("reader", Identity.Method.JWT), Verb.WRITE, inside))
                .isFalse();
        assertThat(policy.allows(Identity.of("root", Identity.Method.ETCD), Verb.WRITE, KeyRange.all()))
                .isTrue();
        assertThat(policy.allows(Identity.of("mallory", Identity.Method.TOKEN), Verb.READ, inside))
                .isFalse();
        assertThat(policy.allows(Identity.ANONYMOUS, Verb.READ, inside)).isFalse();
    }

    @Test
    void aChangedPermissionIsSeenAtTheNextRefresh() throws IOException {
        EtcdRoles policy = roles();
        KeyRange namespaces = KeyRange.prefix(k("/registry/namespaces/"));
        Identity reader = Identity.of("reader", Identity.Method.ETCD);
        Permission grant = prefixPermission("/registry/namespaces/");
        AuthGrpc.AuthBlockingStub auth = AuthGrpc.newBlockingStub(asRoot);
        auth.roleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder()
                .setName("configmap-reader")
                .setPerm(grant)
                .build());
        try {
            assertThat(policy.reload()).as("before the refresh interval").isFalse();
            assertThat(policy.allows(reader, Verb.READ, namespaces)).isFalse();

            nanos.addAndGet(REFRESH.toNanos());
            assertThat(policy.reload()).isTrue();
            assertThat(policy.allows(reader, Verb.READ, namespaces)).isTrue();

            nanos.addAndGet(REFRESH.toNanos());
            assertThat(policy.reload()).as("nothing changed").isFalse();
        } finally {
            auth.roleRevokePermission(AuthRoleRevokePermissionRequest.newBuilder()
                    .setRole("configmap-reader")
                    .setKey(grant.getKey())
                    .setRangeEnd(grant.getRangeEnd())
                    .build());
        }
        nanos.addAndGet(REFRESH.toNanos());
        assertThat(policy.reload()).isTrue();
        assertThat(policy.allows(reader, Verb.READ, namespaces)).isFalse();
    }

    @Test
    void aNodeWithoutRootIsAStartupError() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> EtcdRoles.load(new EtcdAuthReader(asReader), REFRESH, nanos::get))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("--authz=etcd")
                .hasMessageContaining("PERMISSION_DENIED");
    }
}
