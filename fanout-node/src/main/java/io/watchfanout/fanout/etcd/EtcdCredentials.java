package io.watchfanout.fanout.etcd;

import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.etcd.jetcd.api.AuthenticateResponse;
import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.watchfanout.common.EtcdSecurity;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The etcd user of the node's own calls ({@code --etcd-user}): a token from etcd's
 * {@code Auth/Authenticate}, attached as the {@code token} metadata, as clientv3 does. Only the
 * node's own calls carry it ({@link EtcdRevisionProbe}: consistent reads and the refresh of the
 * headers); calls forwarded for clients ({@link EtcdForwarder}, {@link EtcdRangeService}) keep
 * the client's own metadata and never get the node's token.
 *
 * <p>The token is fetched on the first call and kept; when etcd answers a call with
 * {@code UNAUTHENTICATED} "invalid auth token" (the token expired, etcd restarted, or a simple
 * token was revoked), {@link #renewAfter} forgets it, so that the call's retry authenticates
 * again. A failed {@code Authenticate} (a wrong password, etcd down) fails the call it was for;
 * the next call tries again. Without a user, calls get no metadata.
 *
 * <p>Thread-safe.
 */
public final class EtcdCredentials extends CallCredentials {
    /** etcd's metadata key of an auth token (clientv3's {@code rpctypes.TokenFieldNameGRPC}). */
    static final Metadata.Key<String> TOKEN = Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);

    private final Channel etcd;
    private final String user;
    private final String password;
    private final Duration timeout;
    private CompletableFuture<String> token; // guarded by this

    private EtcdCredentials(Channel etcd, String user, String password, Duration timeout) {
        this.etcd = etcd;
        this.user = user;
        this.password = password;
        this.timeout = timeout;
    }

    /**
     * @param etcd the node's channel to etcd (TLS as configured, no credentials of its own)
     * @param security the node's etcd settings; without a user the credentials add nothing
     * @param timeout how long one {@code Authenticate} may take
     */
    public static EtcdCredentials of(Channel etcd, EtcdSecurity security, Duration timeout) {
        return new EtcdCredentials(etcd, security.user(), security.password(), timeout);
    }

    /** Credentials that add nothing (no {@code --etcd-user}). */
    public static EtcdCredentials none() {
        return new EtcdCredentials(null, null, null, Duration.ZERO);
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        if (user == null) {
            applier.apply(new Metadata());
            return;
        }
        token().whenComplete((t, failure) -> {
            if (failure != null) {
                Status s = Status.fromThrowable(failure);
                applier.fail(s.withDescription(
                        "authenticating to etcd as --etcd-user " + user + " failed: " + s.getDescription()));
            } else {
                Metadata m = new Metadata();
                m.put(TOKEN, t);
                applier.apply(m);
            }
        });
    }

    /**
     * Whether {@code failure} of a call with these credentials is etcd's "invalid auth token":
     * then the token is forgotten and the caller may retry the call once, which authenticates again.
     */
    public boolean renewAfter(Throwable failure) {
        if (user == null || !isInvalidToken(failure)) {
            return false;
        }
        synchronized (this) {
            token = null;
        }
        return true;
    }

    /** etcd's answer to a call whose token it does not know (any more): {@code etcdserver: invalid auth token}. */
    static boolean isInvalidToken(Throwable failure) {
        Status s = Status.fromThrowable(failure);
        return s.getCode() == Status.Code.UNAUTHENTICATED
                && s.getDescription() != null
                && s.getDescription().contains("invalid auth token");
    }

    private synchronized CompletableFuture<String> token() {
        if (token == null || token.isCompletedExceptionally()) {
            token = authenticate();
        }
        return token;
    }

    private CompletableFuture<String> authenticate() {
        CompletableFuture<String> f = new CompletableFuture<>();
        AuthenticateRequest request = AuthenticateRequest.newBuilder()
                .setName(user)
                .setPassword(password)
                .build();
        ClientCalls.asyncUnaryCall(
                etcd.newCall(
                        AuthGrpc.getAuthenticateMethod(),
                        CallOptions.DEFAULT.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)),
                request,
                new StreamObserver<AuthenticateResponse>() {
                    @Override
                    public void onNext(AuthenticateResponse r) {
                        f.complete(r.getToken());
                    }

                    @Override
                    public void onError(Throwable t) {
                        f.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        f.completeExceptionally(Status.INTERNAL
                                .withDescription("etcd's Authenticate answered nothing")
                                .asRuntimeException());
                    }
                });
        return f;
    }

    /** The user, never the password or the token. */
    @Override
    public String toString() {
        return "EtcdCredentials{user=" + user + "}";
    }
}
