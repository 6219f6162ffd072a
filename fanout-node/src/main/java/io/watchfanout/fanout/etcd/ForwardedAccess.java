package io.watchfanout.fanout.etcd;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.DeleteRangeRequest;
import io.etcd.jetcd.api.LeaseTimeToLiveRequest;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;
import io.grpc.Status;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessDeniedException;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.Verb;

/**
 * What a forwarded etcd call needs (README.md, "Security"), checked on each request message
 * before it goes to etcd:
 *
 * <ul>
 *   <li>{@code KV/Put}, {@code KV/DeleteRange}: {@link Verb#WRITE} on their keys, and
 *       {@link Verb#READ} too with {@code prev_kv} (the answer carries the old values);
 *   <li>{@code KV/Txn}: every compare {@code READ}, every operation of both branches (nested
 *       transactions too) as above, ranges {@code READ};
 *   <li>{@code Lease/LeaseRevoke}: {@code WRITE} on every key (it deletes the lease's keys,
 *       which the node cannot see); {@code Lease/LeaseTimeToLive} with {@code keys}: {@code READ}
 *       on every key (it names them); the other lease calls (grant, keep-alive, list) change
 *       and show no key and only need an authenticated caller: a lease matters once a
 *       {@code Put}, checked above, attaches it;
 *   <li>{@code Auth/Authenticate}: nothing (it is how etcd's users log in);
 *   <li>everything else ({@code KV/Compact}, {@code Maintenance}, {@code Cluster}, the rest of
 *       {@code Auth}, v3election, v3lock, any method the node does not know): {@code WRITE} on
 *       every key.
 * </ul>
 *
 * A refusal is etcd's {@code PERMISSION_DENIED "etcdserver: permission denied"}; the audit line
 * says what was refused. The request goes to etcd with the client's own metadata: etcd with
 * authentication on checks the client's token as well. Stateless and thread-safe.
 */
final class ForwardedAccess {
    /** etcd's message of {@code ErrGRPCPermissionDenied}. */
    static final String PERMISSION_DENIED = "etcdserver: permission denied";

    private final AccessControl access;

    ForwardedAccess(AccessControl access) {
        this.access = access;
    }

    /**
     * Checks one request message of {@code method}.
     *
     * @param identity the caller, null only for {@link EtcdAuth#AUTHENTICATE}
     * @return null when it may go to etcd, else the status to close the call with
     */
    Status check(String method, Identity identity, byte[] request) {
        if (method.equals(EtcdAuth.AUTHENTICATE) || access.isOpen()) {
            return null;
        }
        try {
            switch (method) {
                case "etcdserverpb.KV/Put" -> put(identity, PutRequest.parseFrom(request));
                case "etcdserverpb.KV/DeleteRange" -> delete(identity, DeleteRangeRequest.parseFrom(request));
                case "etcdserverpb.KV/Range" -> range(identity, RangeRequest.parseFrom(request));
                case "etcdserverpb.KV/Txn" -> txn(identity, TxnRequest.parseFrom(request));
                case "etcdserverpb.Lease/LeaseGrant",
                        "etcdserverpb.Lease/LeaseKeepAlive",
                        "etcdserverpb.Lease/LeaseLeases" -> {}
                case "etcdserverpb.Lease/LeaseTimeToLive" -> {
                    if (LeaseTimeToLiveRequest.parseFrom(request).getKeys()) {
                        authorize(identity, Verb.READ, KeyRange.all());
                    }
                }
                default -> authorize(identity, Verb.WRITE, KeyRange.all());
            }
            return null;
        } catch (AccessDeniedException e) {
            return Status.PERMISSION_DENIED.withDescription(PERMISSION_DENIED);
        } catch (InvalidProtocolBufferException e) {
            // The methods parsed here are unary: etcd's answer to their unreadable request.
            return UnreadableRequests.unreadable(true, e.getMessage());
        }
    }

    private void put(Identity id, PutRequest r) throws AccessDeniedException {
        KeyRange key = KeyRange.single(r.getKey());
        authorize(id, Verb.WRITE, key);
        if (r.getPrevKv()) {
            authorize(id, Verb.READ, key);
        }
    }

    private void delete(Identity id, DeleteRangeRequest r) throws AccessDeniedException {
        KeyRange range = range(r.getKey(), r.getRangeEnd());
        if (range != null) {
            authorize(id, Verb.WRITE, range);
            if (r.getPrevKv()) {
                authorize(id, Verb.READ, range);
            }
        }
    }

    private void range(Identity id, RangeRequest r) throws AccessDeniedException {
        KeyRange range = range(r.getKey(), r.getRangeEnd());
        if (range != null) {
            authorize(id, Verb.READ, range);
        }
    }

    private void txn(Identity id, TxnRequest t) throws AccessDeniedException {
        for (Compare c : t.getCompareList()) {
            KeyRange range = range(c.getKey(), c.getRangeEnd());
            if (range != null) {
                authorize(id, Verb.READ, range);
            }
        }
        for (RequestOp op : t.getSuccessList()) {
            op(id, op);
        }
        for (RequestOp op : t.getFailureList()) {
            op(id, op);
        }
    }

    private void op(Identity id, RequestOp op) throws AccessDeniedException {
        switch (op.getRequestCase()) {
            case REQUEST_RANGE -> range(id, op.getRequestRange());
            case REQUEST_PUT -> put(id, op.getRequestPut());
            case REQUEST_DELETE_RANGE -> delete(id, op.getRequestDeleteRange());
            case REQUEST_TXN -> txn(id, op.getRequestTxn());
            default -> {
                // An empty operation touches no key.
            }
        }
    }

    /** etcd's range of a request; null when it matches no key (an end before the key). */
    static KeyRange range(ByteString key, ByteString rangeEnd) {
        try {
            return KeyRange.of(key, rangeEnd);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private void authorize(Identity id, Verb verb, KeyRange range) throws AccessDeniedException {
        if (id == null) {
            throw new AccessDeniedException("a call without an identity");
        }
        access.authorize(id, verb, range, EtcdAuth.api());
    }
}
