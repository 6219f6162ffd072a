package io.watchfanout.fanout.security;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * {@code etcd} ({@code --etcd-user-auth}): etcd's own users. The node forwards
 * {@code Auth/Authenticate} to etcd and is told of each token etcd returns ({@link #issued});
 * a request presenting that token (gRPC metadata {@code token}, as clientv3 and jetcd send it, or
 * {@code Authorization: Bearer}) is that etcd user ({@link Identity.Method#ETCD}), until the
 * token has not been used for {@link #TOKEN_TTL}.
 *
 * <p>A token this node did not see issued (issued through another node or by etcd directly, or
 * forgotten after a restart or the TTL) of etcd's simple-token shape ({@link TokenKind#ETCD}) is
 * refused with etcd's own message {@value #INVALID_TOKEN}, on which clientv3 and jetcd
 * authenticate again, this time through this node. Tokens of other shapes are passed on to the
 * other authenticators unless remembered (etcd's {@code --auth-token=jwt} issues JWTs).
 *
 * <p>Thread-safe; {@link #issued} is called on grpc's threads, {@link #authenticate} on the
 * transports', {@link #reload} (which forgets expired tokens) on the security thread.
 */
public final class EtcdTokens implements Authenticator {
    /** etcd's default {@code --auth-token-ttl} of simple tokens: they expire this long after their last use. */
    public static final Duration TOKEN_TTL = Duration.ofMinutes(5);
    /** etcd's {@code ErrInvalidAuthToken} message; clients re-authenticate on it. */
    static final String INVALID_TOKEN = "etcdserver: invalid auth token";

    private static final class Entry {
        final Identity identity;
        volatile long lastUsedNanos;

        Entry(Identity identity, long lastUsedNanos) {
            this.identity = identity;
            this.lastUsedNanos = lastUsedNanos;
        }
    }

    private final Map<ByteBuffer, Entry> tokens = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;

    /** Tokens remembered on {@link System#nanoTime()}. */
    public EtcdTokens() {
        this(System::nanoTime);
    }

    EtcdTokens(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    /**
     * Remembers that etcd issued {@code token} to {@code user} (an {@code Authenticate} response
     * passed through the node). Ignores empty values.
     */
    public void issued(String token, String user) {
        if (token == null || token.isEmpty() || user == null || user.isEmpty()) {
            return;
        }
        tokens.put(key(token), new Entry(Identity.of(user, Identity.Method.ETCD), nanoClock.getAsLong()));
    }

    @Override
    public Identity authenticate(Credentials credentials) throws AuthenticationException {
        String token = credentials.token();
        if (token == null) {
            return null;
        }
        ByteBuffer key = key(token);
        Entry e = tokens.get(key);
        long now = nanoClock.getAsLong();
        if (e != null && now - e.lastUsedNanos <= TOKEN_TTL.toNanos()) {
            e.lastUsedNanos = now;
            return e.identity;
        }
        if (e != null) {
            tokens.remove(key, e);
        }
        if (TokenKind.of(token) != TokenKind.ETCD) {
            return null;
        }
        throw new AuthenticationException(INVALID_TOKEN);
    }

    /** Forgets the tokens not used for {@link #TOKEN_TTL}. */
    @Override
    public boolean reload() {
        long now = nanoClock.getAsLong();
        tokens.values().removeIf(e -> now - e.lastUsedNanos > TOKEN_TTL.toNanos());
        return false;
    }

    @Override
    public String name() {
        return "etcd";
    }

    /** Tokens remembered and not yet forgotten, for tests. */
    int size() {
        return tokens.size();
    }

    private static ByteBuffer key(String token) {
        return TokenDigest.of(token.getBytes(StandardCharsets.UTF_8));
    }
}
