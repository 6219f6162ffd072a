package io.watchfanout.fanout.etcd;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.watchfanout.common.tls.PeerCertificates;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.Listener;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who calls the etcd API (README.md, "Security"): every call is authenticated once, when it
 * starts, and its {@link Identity} goes into the call's grpc {@link Context} for the services
 * and the forwarder ({@link #identity()}). {@code etcdserverpb.Auth/Authenticate} passes without
 * credentials, since it is how etcd's users log in.
 *
 * <p>Two servers, two interceptors. The port's ({@link #transport()}) reads the client
 * certificate of the call's TLS session, the {@code authorization} metadata and etcd's
 * {@code token} metadata, and answers {@code UNAUTHENTICATED} with the authenticator's message
 * (for an unknown etcd token etcd's own {@code etcdserver: invalid auth token}, on which clients
 * log in again). The in-process server's ({@link #inProcess()}) serves only the JSON gateway,
 * which authenticated the HTTP request itself: the gateway registers the identity under a
 * random one-time ticket ({@link #ticket}) and sends the ticket as metadata; the port's
 * interceptor removes that metadata from every call, so a ticket from outside is never read.
 *
 * <p>Thread-safe.
 */
final class EtcdAuth {
    /** The one method served without credentials. */
    static final String AUTHENTICATE = "etcdserverpb.Auth/Authenticate";
    /** The audit name of calls on the etcd API port. */
    static final String GRPC_API = "etcd-grpc";
    /** The audit name of calls through the JSON gateway ({@code /v3/*} on the HTTP port). */
    static final String GATEWAY_API = "etcd-gateway";

    static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> TOKEN = Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);
    /** The gateway's ticket: only the in-process server reads it. */
    static final Metadata.Key<String> TICKET =
            Metadata.Key.of("watchfanout-gateway-ticket", Metadata.ASCII_STRING_MARSHALLER);

    private static final Context.Key<Identity> IDENTITY = Context.key("watchfanout-identity");
    private static final Context.Key<String> API = Context.key("watchfanout-api");

    private final AccessControl access;
    private final Map<String, Identity> tickets = new ConcurrentHashMap<>();
    private final SecureRandom random = new SecureRandom();

    EtcdAuth(AccessControl access) {
        this.access = access;
    }

    AccessControl access() {
        return access;
    }

    /** The identity of the current call; null for {@link #AUTHENTICATE} (or outside a call). */
    static Identity identity() {
        return IDENTITY.get();
    }

    /** The audit name of the current call's API: {@link #GRPC_API} or {@link #GATEWAY_API}. */
    static String api() {
        String api = API.get();
        return api == null ? GRPC_API : api;
    }

    /**
     * The credentials of an etcd API call or gateway request. An {@code authorization} value
     * that is not {@code Bearer <token>} is an etcd token, as etcd reads it (its gateway passes
     * {@code Authorization: <token>} on as {@code authorization} metadata).
     *
     * @param commonName the verified client certificate's CN, or null
     * @param authorization the {@code authorization} metadata or header, or null
     * @param token the {@code token} metadata, or null
     */
    static Credentials credentials(String commonName, String authorization, String token) {
        if (authorization != null && token == null && !authorization.regionMatches(true, 0, "Bearer", 0, 6)) {
            return new Credentials(commonName, null, authorization);
        }
        return new Credentials(commonName, authorization, token);
    }

    /**
     * Authenticates a gateway request on the HTTP listener.
     *
     * @return null for {@link #AUTHENTICATE}, which needs no credentials
     */
    Identity authenticateGateway(String method, String commonName, String authorization)
            throws AuthenticationException {
        if (method.equals(AUTHENTICATE)) {
            return null;
        }
        return access.authenticate(Listener.HTTP, credentials(commonName, authorization, null), GATEWAY_API);
    }

    /** Registers {@code identity} for one in-process call; the ticket is for {@link #TICKET}. */
    String ticket(Identity identity) {
        byte[] b = new byte[16];
        random.nextBytes(b);
        String t = HexFormat.of().formatHex(b);
        tickets.put(t, identity);
        return t;
    }

    /** Drops a ticket the in-process server did not take (the call ended first). */
    void forget(String ticket) {
        tickets.remove(ticket);
    }

    /** The interceptor of the etcd API port. */
    ServerInterceptor transport() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                headers.removeAll(TICKET);
                Context ctx = Context.current().withValue(API, GRPC_API);
                if (call.getMethodDescriptor().getFullMethodName().equals(AUTHENTICATE)) {
                    return Contexts.interceptCall(ctx, call, headers, next);
                }
                Identity id;
                try {
                    id = access.isOpen() ? Identity.ANONYMOUS : authenticate(call, headers);
                } catch (AuthenticationException e) {
                    return refuse(call, e.getMessage());
                }
                return Contexts.interceptCall(ctx.withValue(IDENTITY, id), call, headers, next);
            }
        };
    }

    private Identity authenticate(ServerCall<?, ?> call, Metadata headers) throws AuthenticationException {
        String authorization = only(headers, AUTHORIZATION);
        String token = only(headers, TOKEN);
        String cn = PeerCertificates.commonName(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
        return access.authenticate(Listener.ETCD_API, credentials(cn, authorization, token), GRPC_API);
    }

    private static String only(Metadata headers, Metadata.Key<String> key) throws AuthenticationException {
        Iterable<String> all = headers.getAll(key);
        if (all == null) {
            return null;
        }
        String first = null;
        int n = 0;
        for (String v : all) {
            first = n == 0 ? v : first;
            n++;
        }
        if (n > 1) {
            throw new AuthenticationException(
                    "metadata " + key.name() + " given " + n + " times (expected: at most once)");
        }
        return first;
    }

    /** The interceptor of the in-process server, which only the JSON gateway calls. */
    ServerInterceptor inProcess() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                String ticket = headers.get(TICKET);
                headers.removeAll(TICKET);
                Identity id = ticket == null ? null : tickets.remove(ticket);
                Context ctx = Context.current().withValue(API, GATEWAY_API);
                if (id == null
                        && !call.getMethodDescriptor().getFullMethodName().equals(AUTHENTICATE)) {
                    return refuse(call, "the gateway's call carries no identity");
                }
                return Contexts.interceptCall(ctx.withValue(IDENTITY, id), call, headers, next);
            }
        };
    }

    private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, String message) {
        call.close(Status.UNAUTHENTICATED.withDescription(message), new Metadata());
        return new ServerCall.Listener<>() {};
    }
}
