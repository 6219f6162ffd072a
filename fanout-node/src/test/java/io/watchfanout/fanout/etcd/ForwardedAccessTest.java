package io.watchfanout.fanout.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;
import io.grpc.Status;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.TestAccess;
import io.watchfanout.fanout.security.WatchLimits;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What forwarded etcd calls need: writes on their keys, a transaction's every part, the whole keyspace for the rest. */
class ForwardedAccessTest {
    private static final Identity WRITER = Identity.of("writer", Identity.Method.TOKEN);

    @TempDir
    Path dir;

    private ForwardedAccess access() throws Exception {
        AccessControl control = TestAccess.create(
                        dir.resolve("policy.json"),
                        "{\"subjects\": [\"writer\"], \"verbs\": [\"read\", \"write\"], "
                                + "\"prefixes\": [\"/registry/configmaps/\"]}",
                        WatchLimits.NONE)
                .access();
        return new ForwardedAccess(control);
    }

    private static ByteString b(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static RequestOp put(String key) {
        return RequestOp.newBuilder()
                .setRequestPut(PutRequest.newBuilder().setKey(b(key)))
                .build();
    }

    @Test
    void writesNeedTheirKeysAndTransactionsEveryPart() throws Exception {
        ForwardedAccess a = access();
        byte[] inside = PutRequest.newBuilder()
                .setKey(b("/registry/configmaps/a"))
                .build()
                .toByteArray();
        byte[] outside =
                PutRequest.newBuilder().setKey(b("/registry/secrets/a")).build().toByteArray();
        assertThat(a.check("etcdserverpb.KV/Put", WRITER, inside)).isNull();
        assertThat(a.check("etcdserverpb.KV/Put", WRITER, outside).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        // Bytes that are no PutRequest: etcd's answer to an unreadable request (grpc-go's codec error).
        Status unreadable = a.check("etcdserverpb.KV/Put", WRITER, new byte[] {(byte) 0xff, (byte) 0xff});
        assertThat(unreadable.getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(unreadable.getDescription()).startsWith("grpc: error unmarshalling request: ");

        TxnRequest.Builder txn = TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(b("/registry/configmaps/a")))
                .addSuccess(put("/registry/configmaps/b"));
        assertThat(a.check("etcdserverpb.KV/Txn", WRITER, txn.build().toByteArray()))
                .isNull();
        // A compare outside, a failure branch writing outside, a nested read outside: each refuses the whole.
        for (TxnRequest bad : new TxnRequest[] {
            txn.clone()
                    .addCompare(Compare.newBuilder().setKey(b("/registry/secrets/a")))
                    .build(),
            txn.clone().addFailure(put("/registry/secrets/a")).build(),
            txn.clone()
                    .addSuccess(RequestOp.newBuilder()
                            .setRequestTxn(TxnRequest.newBuilder()
                                    .addSuccess(RequestOp.newBuilder()
                                            .setRequestRange(RangeRequest.newBuilder()
                                                    .setKey(b("/registry/configmaps/"))
                                                    .setRangeEnd(b("\0"))))))
                    .build()
        }) {
            assertThat(a.check("etcdserverpb.KV/Txn", WRITER, bad.toByteArray()).getCode())
                    .isEqualTo(Status.Code.PERMISSION_DENIED);
        }
    }

    @Test
    void compactionMaintenanceAndLeaseRevocationNeedTheWholeKeyspaceAndAuthenticateNothing() throws Exception {
        ForwardedAccess a = access();
        for (String method : new String[] {
            "etcdserverpb.KV/Compact",
            "etcdserverpb.Maintenance/Defragment",
            "etcdserverpb.Cluster/MemberList",
            "etcdserverpb.Auth/UserAdd",
            "etcdserverpb.Lease/LeaseRevoke",
            "v3lockpb.Lock/Lock"
        }) {
            assertThat(a.check(method, WRITER, new byte[0]).getCode())
                    .as(method)
                    .isEqualTo(Status.Code.PERMISSION_DENIED);
        }
        assertThat(a.check("etcdserverpb.Lease/LeaseGrant", WRITER, new byte[0]))
                .isNull();
        assertThat(a.check(EtcdAuth.AUTHENTICATE, null, new byte[0])).isNull();
    }
}
