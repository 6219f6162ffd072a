package io.watchfanout.fanout.security;

import io.watchfanout.common.KeyRange;
import java.util.function.Consumer;

/**
 * A watch the node admitted ({@link AccessControl#admitWatch}): it holds the identity's and the
 * node's watch slots until {@link #end}, and is checked again whenever the policy changes; a
 * grant the new policy no longer allows is revoked, and its front end ends the watch (HTTP: an
 * {@code ERROR} frame with 403; etcd API: a canceled watch with the reason).
 *
 * <p>Thread-safe: {@link #onRevoked} and {@link #end} from the front end's threads, revocation
 * from the security thread.
 */
public final class WatchGrant {
    private final long id;
    private final Identity identity;
    private final KeyRange range;
    private final String api;
    private final long startNanos;
    private final AccessControl owner;
    private final WatchAuthorization authorization;
    private Consumer<String> revoker;
    private String revokedReason;
    private boolean ended;

    WatchGrant(
            long id,
            Identity identity,
            KeyRange range,
            String api,
            long startNanos,
            AccessControl owner,
            WatchAuthorization authorization) {
        this.authorization = authorization;
        this.id = id;
        this.identity = identity;
        this.range = range;
        this.api = api;
        this.startNanos = startNanos;
        this.owner = owner;
    }

    /** The grant's number in audit lines. */
    public long id() {
        return id;
    }

    /** Who holds the watch. */
    public Identity identity() {
        return identity;
    }

    /** The normalised range the watch was admitted for. */
    public KeyRange range() {
        return range;
    }

    /** The Kubernetes authorization of the watch, or null for one the node's policy ({@code --authz}) admitted. */
    public WatchAuthorization authorization() {
        return authorization;
    }

    /** The API it was opened on ({@code http-json}, {@code etcd-grpc}, ...), for audit lines. */
    public String api() {
        return api;
    }

    /**
     * What to do when the policy no longer allows the watch: end it with a 403 carrying
     * {@code reason}. Runs at most once, on the security thread; at once (on this thread) when the
     * grant was revoked before this call. Not run after {@link #end}.
     */
    public void onRevoked(Consumer<String> revoker) {
        String reason;
        synchronized (this) {
            if (ended) {
                return;
            }
            if (revokedReason == null) {
                this.revoker = revoker;
                return;
            }
            reason = revokedReason;
        }
        revoker.accept(reason);
    }

    /**
     * The watch ended: releases its slots and writes the audit line. Idempotent; the first call's
     * figures are logged.
     *
     * @param reason why it ended, e.g. {@code client-closed}, {@code expired}, {@code forbidden}
     * @param frames frames the watch delivered, {@code >= 0}, or -1 when unknown
     */
    public void end(String reason, long frames) {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            revoker = null;
        }
        owner.ended(this, reason, frames, (System.nanoTime() - startNanos) / 1_000_000);
    }

    /** Marks the grant revoked and runs its revoker, if any. Called by the owner's security thread. */
    void revoke(String reason) {
        Consumer<String> r;
        synchronized (this) {
            if (ended || revokedReason != null) {
                return;
            }
            revokedReason = reason;
            r = revoker;
            revoker = null;
        }
        if (r != null) {
            r.accept(reason);
        }
    }

    synchronized boolean isRevoked() {
        return revokedReason != null;
    }
}
