package io.watchfanout.fanout.security;

import java.io.IOException;

/**
 * One way of establishing an identity (a certificate, a token file, JWTs, etcd's tokens).
 * {@link Authentication} asks each configured one in turn.
 *
 * <p>Implementations are thread-safe and do no blocking I/O in {@link #authenticate} (it runs
 * when a request or stream starts, on a transport's thread).
 */
public interface Authenticator {
    /**
     * The identity these credentials establish, or null when they carry nothing of this
     * authenticator's kind (the next one is asked).
     *
     * @throws AuthenticationException when they are of this kind but invalid (unknown token,
     *     bad signature, expired, wrong issuer or audience)
     */
    Identity authenticate(Credentials credentials) throws AuthenticationException;

    /**
     * Re-reads the authenticator's files if they changed (token file, JWKS); called about once a
     * second from the security thread. A file that cannot be read or parsed keeps the previous
     * contents and is reported by the exception.
     *
     * @return true when the contents changed
     * @throws java.io.IOException when a changed file cannot be read or parsed
     */
    default boolean reload() throws IOException {
        return false;
    }

    /** A short name for logs and metrics: {@code cert}, {@code token}, {@code jwt}, {@code etcd}. */
    String name();
}
