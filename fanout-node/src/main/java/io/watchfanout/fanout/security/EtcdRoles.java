package io.watchfanout.fanout.security;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.watchfanout.common.KeyRange;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --authz=etcd}: etcd's own roles and permissions ({@link EtcdPermissions}), read with the
 * node's channel to etcd. An identity is the etcd user of the same name, however it was
 * established (an etcd token, or a certificate's common name as etcd's {@code --client-cert-auth}
 * takes it, a static token's user, a JWT's subject).
 *
 * <p>Every {@code --authz-etcd-refresh}, {@link #reload()} asks etcd's {@code AuthStatus} and
 * reads the roles again when the auth revision moved (etcd before 3.5 has no
 * {@code AuthStatus}: the roles are then read on every refresh and compared). When etcd's
 * authentication is disabled, etcd allows everything, and so does this policy (a warning is
 * logged when that is found). Until the roles were read once (etcd unreachable at startup),
 * nothing is allowed.
 *
 * <p>Thread-safe: {@link #allows} reads a snapshot that {@link #reload()} replaces; reload runs
 * on one thread at a time (the security thread).
 */
final class EtcdRoles implements AccessPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdRoles.class);

    /** What is in force: etcd's permissions, or everything (auth disabled), or nothing (not read yet). */
    private record State(EtcdPermissions permissions, boolean authDisabled, long revision) {
        static final State UNREAD = new State(null, false, -1);
    }

    private final EtcdAuthReader reader;
    private final long refreshNanos;
    private final LongSupplier nanoClock;
    private volatile State state = State.UNREAD;
    private long nextRefreshNanos;
    private boolean statusUnsupportedLogged;

    EtcdRoles(EtcdAuthReader reader, Duration refresh, LongSupplier nanoClock) {
        this.reader = reader;
        this.refreshNanos = refresh.toNanos();
        this.nanoClock = nanoClock;
    }

    /**
     * The policy, with etcd's roles read once. etcd being unreachable is not fatal (nothing is
     * allowed until a refresh reads them); etcd refusing the node is.
     *
     * @throws IOException when etcd refuses to show its roles (the node's user lacks the root role)
     */
    static EtcdRoles load(EtcdAuthReader reader, Duration refresh, LongSupplier nanoClock) throws IOException {
        EtcdRoles roles = new EtcdRoles(reader, refresh, nanoClock);
        try {
            roles.refresh();
        } catch (StatusRuntimeException e) {
            Status.Code code = e.getStatus().getCode();
            if (code != Status.Code.UNAVAILABLE && code != Status.Code.DEADLINE_EXCEEDED) {
                throw failure(e);
            }
            LOG.warn("--authz=etcd: etcd is not reachable ({}); nothing is allowed until its roles are read", code);
        }
        return roles;
    }

    @Override
    public boolean allows(Identity identity, Verb verb, KeyRange range) {
        State s = state;
        if (s.authDisabled()) {
            return true;
        }
        return s.permissions() != null && s.permissions().allows(identity.name(), verb, range);
    }

    @Override
    public boolean reload() throws IOException {
        if (state != State.UNREAD && nanoClock.getAsLong() - nextRefreshNanos < 0) {
            return false;
        }
        try {
            return refresh();
        } catch (StatusRuntimeException e) {
            throw failure(e);
        }
    }

    /** Reads etcd's auth status and, when it moved, its roles; true when what is allowed changed. */
    private boolean refresh() {
        nextRefreshNanos = nanoClock.getAsLong() + refreshNanos;
        State before = state;
        EtcdAuthReader.AuthStatus status = reader.status();
        State after;
        if (status == null) {
            if (!statusUnsupportedLogged) {
                statusUnsupportedLogged = true;
                LOG.info("--authz=etcd: etcd has no AuthStatus (before 3.5): its roles are read on every refresh");
            }
            after = new State(reader.permissions(), false, -1);
        } else if (!status.enabled()) {
            if (!before.authDisabled()) {
                LOG.warn("--authz=etcd: etcd's authentication is disabled, so etcd allows every request, and so does "
                        + "this node");
            }
            after = new State(null, true, status.revision());
        } else if (before.permissions() != null && status.revision() == before.revision()) {
            return false;
        } else {
            after = new State(reader.permissions(), false, status.revision());
        }
        state = after;
        return before.authDisabled() != after.authDisabled()
                || !Objects.equals(before.permissions(), after.permissions());
    }

    private static IOException failure(StatusRuntimeException e) {
        return new IOException("--authz=etcd: cannot read etcd's roles (the node's etcd user needs the root role): "
                + e.getStatus().getCode() + " " + e.getStatus().getDescription());
    }

    @Override
    public String describe() {
        State s = state;
        if (s.authDisabled()) {
            return "etcd (authentication disabled: everything allowed)";
        }
        return s.permissions() == null
                ? "etcd (roles not read yet)"
                : "etcd (" + s.permissions().users() + " users)";
    }
}
