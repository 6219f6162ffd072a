package io.watchfanout.fanout.security;

import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.KeyRange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's security in one place, for every front end: who is asking
 * ({@link #authenticate}), whether they may ({@link #authorize}, {@link #admitWatch}), the watch
 * limits, the audit trail, and the reload of policy and credential files. Checks happen when a
 * request or watch starts and when the policy changes, never per event: the dispatch path does
 * not know this class.
 *
 * <p>A node without authentication ({@code --anonymous} and no {@code --authz}) gets
 * {@link #open}: everyone is {@link Identity#ANONYMOUS} and allowed, and only the limits apply.
 *
 * <p>Thread-safe. One daemon thread ({@code watchfanout-security-<node>}) checks the files about
 * once a second after {@link #start()}; {@link #close()} stops it.
 */
public final class AccessControl implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AccessControl.class);
    /** How often changed policy, token and key files are looked for. */
    static final long RELOAD_PERIOD_MILLIS = 1000;
    /** Retry-After when --max-watchers is reached: soon, since the client should try another node. */
    private static final int NODE_FULL_RETRY_AFTER_SECONDS = 1;
    /** Retry-After when an identity has its most watches open: one closes when the client closes it. */
    private static final int IDENTITY_FULL_RETRY_AFTER_SECONDS = 5;

    private final String nodeId;
    private final Map<Listener, Authentication> authentication;
    private final AccessPolicy policy;
    private final WatchLimits limits;
    private final AuditLog audit;
    private final SecurityStats stats;
    private final LongSupplier nanoClock;
    private final boolean open;
    private final EtcdTokens etcdTokens;
    private final Set<WatchGrant> grants = ConcurrentHashMap.newKeySet();
    /** Per identity name: open watches and the new-watch bucket. Guarded by {@code this}. */
    private final Map<String, PerIdentity> identities = new HashMap<>();
    /** The last reload failure per file source, so that a broken file is logged once, not every second. */
    private final Map<Object, String> reloadErrors = new IdentityHashMap<>();

    private int openWatches;
    private long nextGrant;
    private ScheduledExecutorService reloader;

    private static final class PerIdentity {
        int watches;
        TokenBucket bucket;
    }

    private AccessControl(Builder b) {
        this.nodeId = b.nodeId;
        this.authentication = new EnumMap<>(Listener.class);
        for (Listener l : Listener.values()) {
            authentication.put(l, new Authentication(b.authenticators.getOrDefault(l, List.of()), b.anonymous));
        }
        this.policy = b.policy;
        this.limits = b.limits;
        this.nanoClock = b.nanoClock;
        this.open = b.open;
        this.etcdTokens = b.etcdTokens;
        this.audit = new AuditLog(nodeId);
        this.stats = new SecurityStats(limits, grants::size);
    }

    /**
     * A node that serves everyone as {@link Identity#ANONYMOUS} and allows everything; only
     * {@code limits} apply.
     */
    public static AccessControl open(String nodeId, WatchLimits limits) {
        Builder b =
                builder(nodeId).anonymous(true).policy(AccessPolicy.ALLOW_ALL).limits(limits);
        b.open = true;
        return b.build();
    }

    /** A builder of a node's access control. */
    public static Builder builder(String nodeId) {
        return new Builder(nodeId);
    }

    /** Builds an {@link AccessControl}. Not thread-safe. */
    public static final class Builder {
        private final String nodeId;
        private final Map<Listener, List<Authenticator>> authenticators = new EnumMap<>(Listener.class);
        private boolean anonymous;
        private AccessPolicy policy;
        private WatchLimits limits = WatchLimits.NONE;
        private LongSupplier nanoClock = System::nanoTime;
        private boolean open;
        private EtcdTokens etcdTokens;

        private Builder(String nodeId) {
            this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        }

        /** The authenticators of {@code listener}, asked in this order. */
        public Builder authenticators(Listener listener, List<Authenticator> list) {
            authenticators.put(listener, List.copyOf(list));
            return this;
        }

        /** Whether requests without credentials are served as {@link Identity#ANONYMOUS} ({@code --anonymous}). */
        public Builder anonymous(boolean allowed) {
            this.anonymous = allowed;
            return this;
        }

        /** The policy every request and watch is checked against. */
        public Builder policy(AccessPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** The watch limits (default: none). */
        public Builder limits(WatchLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /** The tokens etcd issues through this node ({@code --etcd-user-auth}); default none. */
        public Builder etcdTokens(EtcdTokens tokens) {
            this.etcdTokens = Objects.requireNonNull(tokens, "tokens");
            return this;
        }

        /** The clock of the rate limit (tests); default {@link System#nanoTime()}. */
        public Builder nanoClock(LongSupplier clock) {
            this.nanoClock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** @throws IllegalStateException without a policy */
        public AccessControl build() {
            if (policy == null) {
                throw new IllegalStateException("an access control needs a policy");
            }
            return new AccessControl(this);
        }
    }

    /** True for {@link #open}: no authentication, everything allowed. Front ends may skip reading credentials. */
    public boolean isOpen() {
        return open;
    }

    /**
     * The tokens etcd issues through this node, for the etcd API's forwarding of
     * {@code Auth/Authenticate} ({@link EtcdTokens#issued}); null without {@code --etcd-user-auth}.
     */
    public EtcdTokens etcdTokens() {
        return etcdTokens;
    }

    /** Registers the metrics ({@code watchfanout_auth_*}, {@code watchfanout_watch_limit*}). */
    public void register(CollectorRegistry registry) {
        stats.register(registry);
    }

    /** Starts the reload of policy and credential files. */
    public synchronized void start() {
        if (reloader != null || open) {
            return;
        }
        reloader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "watchfanout-security-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        reloader.scheduleWithFixedDelay(
                this::reloadNow, RELOAD_PERIOD_MILLIS, RELOAD_PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        LOG.info(
                "[node {}] security: authentication HTTP {}, etcd API {}, anonymous {}; key-range policy of /v1 and "
                        + "the etcd API {}; limits {}",
                nodeId,
                names(Listener.HTTP),
                names(Listener.ETCD_API),
                authentication.get(Listener.HTTP).anonymous() ? "allowed" : "refused",
                policy.describe(),
                limits);
    }

    private List<String> names(Listener l) {
        List<String> out = new ArrayList<>();
        for (Authenticator a : authentication.get(l).authenticators()) {
            out.add(a.name());
        }
        return out;
    }

    /**
     * Who presented {@code credentials} on {@code listener}.
     *
     * @param api the API asked, for the audit line of a refusal ({@code http}, {@code etcd-grpc}, ...)
     * @throws AuthenticationException when they are missing (and anonymous is not allowed) or invalid
     */
    public Identity authenticate(Listener listener, Credentials credentials, String api)
            throws AuthenticationException {
        if (open) {
            return Identity.ANONYMOUS;
        }
        try {
            return authentication.get(listener).authenticate(credentials);
        } catch (AuthenticationException e) {
            stats.unauthenticated.get(listener).increment();
            audit.unauthenticated(listener, api, e.getMessage());
            throw e;
        }
    }

    /**
     * Whether {@code identity} may {@code verb} the whole {@code range}: the question of an access
     * review, answered without counting or auditing (nothing was refused).
     */
    public boolean allows(Identity identity, Verb verb, KeyRange range) {
        return policy.allows(identity, verb, range);
    }

    /**
     * Checks that {@code identity} may {@code verb} the whole {@code range}; a refusal is counted
     * and audited.
     *
     * @param range the normalised range of the request
     * @throws AccessDeniedException when the policy does not allow it
     */
    public void authorize(Identity identity, Verb verb, KeyRange range, String api) throws AccessDeniedException {
        if (!policy.allows(identity, verb, range)) {
            String reason = identity + " may not " + verb.ruleName() + " " + range;
            stats.denied.get(verb).increment();
            audit.denied(identity, api, verb, range, reason, null);
            throw new AccessDeniedException(reason);
        }
    }

    /**
     * Counts and audits a request the Kubernetes API's authorizers refused ({@code reason}:
     * kube-apiserver's message); the caller answers 403.
     */
    public void deniedKubernetes(Identity identity, String api, RequestAttributes request, String reason) {
        stats.denied
                .get(request.verb().equals("watch") ? Verb.WATCH : Verb.READ)
                .increment();
        audit.denied(identity, api, null, null, reason, request);
    }

    /**
     * Decides every open Kubernetes watch again ({@link WatchAuthorization#recheck}) after a change
     * of the Kubernetes API's policy (a role, a binding, a pod of the Node authorizer's graph);
     * revokes those no longer allowed, which end with a 403 ERROR event.
     *
     * @return the number of watches revoked
     */
    public int recheckKubernetesWatches() {
        int revoked = 0;
        for (WatchGrant g : grants) {
            WatchAuthorization a = g.authorization();
            if (a == null || g.isRevoked()) {
                continue;
            }
            String reason = a.recheck();
            if (reason != null) {
                stats.revoked.increment();
                audit.denied(g.identity(), g.api(), null, g.range(), reason, a.request());
                g.revoke(reason);
                revoked++;
            }
        }
        if (revoked > 0) {
            LOG.info("[node {}] security: ended {} Kubernetes watches the new policy does not allow", nodeId, revoked);
        }
        return revoked;
    }

    /**
     * Admits a watch of {@code range} by {@code identity}: checks the policy, then the node's and
     * the identity's limits, takes a slot of each and audits the start. The caller ends the grant
     * ({@link WatchGrant#end}) when the watch ends, whatever the reason, and registers what ends
     * the watch on revocation ({@link WatchGrant#onRevoked}).
     *
     * @throws AccessDeniedException when the policy does not allow the watch
     * @throws LimitExceededException when a limit is reached (nothing was taken)
     */
    public WatchGrant admitWatch(Identity identity, KeyRange range, String api)
            throws AccessDeniedException, LimitExceededException {
        return admitWatch(identity, range, api, null);
    }

    /**
     * As {@link #admitWatch(Identity, KeyRange, String)}, for a watch the Kubernetes API's
     * authorizers allowed ({@code authorization}, not null) instead of the node's policy: only the
     * limits are checked here, the start is audited with the request's attributes, and
     * {@link #recheckKubernetesWatches} decides it again when their policy changes.
     *
     * @param authorization null for a watch the node's policy decides
     * @throws AccessDeniedException when the node's policy decides and does not allow the watch
     * @throws LimitExceededException when a limit is reached (nothing was taken)
     */
    public WatchGrant admitWatch(Identity identity, KeyRange range, String api, WatchAuthorization authorization)
            throws AccessDeniedException, LimitExceededException {
        if (authorization == null) {
            authorize(identity, Verb.WATCH, range, api);
        }
        WatchGrant grant;
        synchronized (this) {
            if (limits.maxWatchers() > 0 && openWatches >= limits.maxWatchers()) {
                throw limited(
                        SecurityStats.Limit.NODE,
                        identity,
                        range,
                        api,
                        "this node serves its most watches (--max-watchers " + limits.maxWatchers()
                                + "); ask another node",
                        NODE_FULL_RETRY_AFTER_SECONDS);
            }
            PerIdentity mine = identities.computeIfAbsent(identity.name(), k -> new PerIdentity());
            if (limits.maxPerIdentity() > 0 && mine.watches >= limits.maxPerIdentity()) {
                throw limited(
                        SecurityStats.Limit.IDENTITY_CONCURRENT,
                        identity,
                        range,
                        api,
                        identity + " has its most watches open (" + limits.maxPerIdentity()
                                + ", --max-watchers-per-identity)",
                        IDENTITY_FULL_RETRY_AFTER_SECONDS);
            }
            long now = nanoClock.getAsLong();
            if (limits.ratePerIdentity() > 0) {
                if (mine.bucket == null) {
                    mine.bucket = new TokenBucket(limits.ratePerIdentity(), limits.burstPerIdentity(), now);
                }
                int wait = mine.bucket.take(now);
                if (wait > 0) {
                    throw limited(
                            SecurityStats.Limit.IDENTITY_RATE,
                            identity,
                            range,
                            api,
                            identity + " opens watches faster than " + limits.ratePerIdentity()
                                    + " a second (--watch-rate-per-identity, burst " + limits.burstPerIdentity() + ")",
                            wait);
                }
            }
            mine.watches++;
            openWatches++;
            grant = new WatchGrant(++nextGrant, identity, range, api, now, this, authorization);
        }
        grants.add(grant);
        audit.watchStarted(grant.id(), identity, api, range, authorization == null ? null : authorization.request());
        return grant;
    }

    private LimitExceededException limited(
            SecurityStats.Limit limit, Identity identity, KeyRange range, String api, String reason, int retryAfter) {
        stats.limited.get(limit).increment();
        audit.denied(identity, api, Verb.WATCH, range, reason, null);
        return new LimitExceededException(reason, retryAfter);
    }

    /** From {@link WatchGrant#end}: gives the slots back and audits the end. */
    void ended(WatchGrant grant, String reason, long frames, long durationMillis) {
        if (!grants.remove(grant)) {
            return;
        }
        synchronized (this) {
            openWatches--;
            PerIdentity mine = identities.get(grant.identity().name());
            if (mine != null) {
                mine.watches--;
                if (mine.watches == 0 && (mine.bucket == null || mine.bucket.isFull(nanoClock.getAsLong()))) {
                    identities.remove(grant.identity().name());
                }
            }
        }
        audit.watchEnded(
                grant.id(),
                grant.identity(),
                grant.api(),
                grant.range(),
                durationMillis,
                frames,
                reason,
                grant.authorization() == null ? null : grant.authorization().request());
    }

    /** Watches admitted and not ended. */
    public int grants() {
        return grants.size();
    }

    /**
     * Looks for changed files now (the security thread does it every second): reloads the
     * authenticators and the policy, and after a policy change revokes the open watches it no
     * longer allows. Package-private for tests; otherwise runs on the security thread.
     */
    void reloadNow() {
        Set<Authenticator> distinct = new LinkedHashSet<>();
        for (Authentication a : authentication.values()) {
            distinct.addAll(a.authenticators());
        }
        for (Authenticator a : distinct) {
            reload(a, a.name(), a::reload);
        }
        if (reload(policy, policy.describe(), policy::reload)) {
            revalidate();
        }
    }

    private interface Reload {
        boolean run() throws IOException;
    }

    private boolean reload(Object source, String name, Reload reload) {
        try {
            boolean changed = reload.run();
            if (reloadErrors.remove(source) != null || changed) {
                LOG.info("[node {}] security: {} reloaded", nodeId, name);
            }
            if (changed) {
                stats.reloads.increment();
            }
            return changed;
        } catch (IOException | RuntimeException e) {
            String message = String.valueOf(e.getMessage());
            if (!message.equals(reloadErrors.put(source, message))) {
                stats.reloadFailures.increment();
                LOG.warn("[node {}] security: cannot reload {}, keeping the previous one: {}", nodeId, name, message);
            }
            return false;
        }
    }

    /** Revokes every open watch the current policy does not allow. */
    void revalidate() {
        int revoked = 0;
        for (WatchGrant g : grants) {
            // A Kubernetes watch follows its own authorizers (recheckKubernetesWatches), not this policy.
            if (g.authorization() == null && !g.isRevoked() && !policy.allows(g.identity(), Verb.WATCH, g.range())) {
                String reason = "the policy no longer allows " + g.identity() + " to watch " + g.range();
                stats.revoked.increment();
                audit.denied(g.identity(), g.api(), Verb.WATCH, g.range(), reason, null);
                g.revoke(reason);
                revoked++;
            }
        }
        if (revoked > 0) {
            LOG.info("[node {}] security: ended {} watches the new policy does not allow", nodeId, revoked);
        }
    }

    @Override
    public synchronized void close() {
        if (reloader != null) {
            reloader.shutdownNow();
            reloader = null;
        }
    }
}
