package io.watchfanout.fanout.transport;

import io.undertow.server.HttpServerExchange;
import io.undertow.server.SSLSessionInfo;
import io.undertow.util.AttachmentKey;
import io.undertow.util.HeaderValues;
import io.undertow.util.Headers;
import io.watchfanout.common.KeyRange;
import io.watchfanout.common.tls.PeerCertificates;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessDeniedException;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.LimitExceededException;
import io.watchfanout.fanout.security.Listener;
import io.watchfanout.fanout.security.Verb;
import io.watchfanout.fanout.security.WatchGrant;
import io.watchfanout.fanout.watch.Statuses;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * The HTTP port's side of {@link AccessControl} (README.md, "Security"): the credentials of a
 * request (the verified client certificate of its TLS connection, its {@code Authorization}
 * header), and the refusals as {@code Status} answers: 401 {@code Unauthorized} with
 * {@code WWW-Authenticate}, 403 {@code Forbidden}, 429 {@code TooManyRequests} with
 * {@code Retry-After}. Used when a request or watch starts, never per event. Thread-safe.
 *
 * <p>For the front ends mounted on the HTTP port ({@link HttpApi#mount}): {@code /v1} checks
 * its requests through an instance, the others read {@link #credentials} and answer
 * {@link #CHALLENGE} in their own error forms, with the same {@link AccessControl}.
 */
public final class HttpAccess {
    /** The challenge of a 401 (RFC 6750), the {@code WWW-Authenticate} header's value. */
    public static final String CHALLENGE = "Bearer realm=\"watch-fanout\"";
    /** The listener's TLS material, on each request of a TLS listener: it tells which client certificates name users. */
    static final AttachmentKey<ServerTls> SERVER_TLS = AttachmentKey.create(ServerTls.class);

    private final AccessControl access;

    /** Checks with {@code access}; {@link AccessControl#open} lets anyone in. */
    public HttpAccess(AccessControl access) {
        this.access = access;
    }

    /**
     * Who sent the request.
     *
     * @param api the request's audit name
     * @throws ApiException 401, with {@code WWW-Authenticate} already set on the response
     */
    public Identity authenticate(HttpServerExchange exchange, String api) throws ApiException {
        if (access.isOpen()) {
            return Identity.ANONYMOUS;
        }
        try {
            return access.authenticate(Listener.HTTP, credentials(exchange), api);
        } catch (AuthenticationException e) {
            exchange.getResponseHeaders().put(Headers.WWW_AUTHENTICATE, CHALLENGE);
            throw new ApiException(HttpStatuses.unauthorized(e.getMessage()));
        }
    }

    /**
     * What the request presented: the client certificate's common name and the one
     * {@code Authorization} header (given twice, it is refused rather than one picked).
     *
     * @throws AuthenticationException when {@code Authorization} is given more than once
     */
    public static Credentials credentials(HttpServerExchange exchange) throws AuthenticationException {
        List<X509Certificate> chain = clientCertificates(exchange);
        String commonName = chain.isEmpty() ? null : PeerCertificates.commonName(chain.get(0));
        HeaderValues authorization = exchange.getRequestHeaders().get(Headers.AUTHORIZATION);
        if (authorization != null && authorization.size() > 1) {
            throw new AuthenticationException(
                    "header Authorization given " + authorization.size() + " times (expected: at most once)");
        }
        return new Credentials(commonName, authorization == null ? null : authorization.getFirst(), null);
    }

    /**
     * The request's client certificate chain, leaf first, when it names a user: it leads to a CA
     * of {@code --client-ca-file} ({@link ServerTls#clientCertificates}). Empty on plaintext,
     * without a client certificate, and for a certificate of another authenticator's CA (the
     * front proxy's).
     */
    public static List<X509Certificate> clientCertificates(HttpServerExchange exchange) {
        SSLSessionInfo info = exchange.getConnection().getSslSessionInfo();
        if (info == null) {
            return List.of();
        }
        ServerTls tls = exchange.getAttachment(SERVER_TLS);
        return tls == null
                ? PeerCertificates.chain(info.getSSLSession())
                : tls.clientCertificates(info.getSSLSession());
    }

    /** @throws ApiException 403 when {@code identity} may not {@code verb} the whole normalised {@code range} */
    public void authorize(Identity identity, Verb verb, KeyRange range, String api) throws ApiException {
        try {
            access.authorize(identity, verb, range, api);
        } catch (AccessDeniedException e) {
            throw new ApiException(HttpStatuses.forbidden(e.getMessage()));
        }
    }

    /**
     * Admits a watch of the normalised {@code range}; the caller ends the grant when the stream ends.
     *
     * @throws ApiException 403 when the policy refuses it, 429 with {@code Retry-After} at a limit
     */
    public WatchGrant admitWatch(Identity identity, KeyRange range, String api) throws ApiException {
        try {
            return access.admitWatch(identity, range, api);
        } catch (AccessDeniedException e) {
            throw new ApiException(HttpStatuses.forbidden(e.getMessage()));
        } catch (LimitExceededException e) {
            throw new ApiException(Statuses.tooManyRequests(e.getMessage()), e.retryAfterSeconds());
        }
    }
}
