package io.watchfanout.fanout.security;

/**
 * The request's credentials are missing, malformed, unknown, expired or for someone else:
 * HTTP 401 {@code Unauthorized} / gRPC {@code UNAUTHENTICATED}. The message says what was
 * wrong without echoing the secret.
 */
public final class AuthenticationException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message why the credentials were refused, for the client and the audit line */
    public AuthenticationException(String message) {
        super(message, null, false, false);
    }
}
