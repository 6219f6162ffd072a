package io.watchfanout.fanout.security;

import java.util.regex.Pattern;

/**
 * What kind of bearer token a string is, told by its shape alone, so that each token
 * authenticator claims only its own kind and the others pass it on:
 *
 * <ul>
 *   <li>{@link #JWT}: three base64url parts joined by two dots ({@code header.payload.signature};
 *       the signature is empty for {@code alg: none}), judged by {@code jwt};
 *   <li>{@link #ETCD}: etcd's simple token, {@code <letters>.<index>} (etcd's
 *       {@code --auth-token=simple}, the default), judged by {@code etcd};
 *   <li>{@link #OPAQUE}: anything else, judged by {@code token} (kube-apiserver's static tokens
 *       are opaque strings).
 * </ul>
 *
 * An authenticator returns null for a token of another kind and refuses a token of its own kind
 * it does not accept; a token nobody claims is refused by {@link Authentication}. A token an
 * authenticator knows by value (listed in the token file, or issued by etcd through this node)
 * is its own whatever its shape.
 */
public enum TokenKind {
    /** A compact JWS or JWT. */
    JWT,
    /** etcd's simple token. */
    ETCD,
    /** A static token. */
    OPAQUE;

    private static final Pattern JWT_SHAPE = Pattern.compile("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*");
    private static final Pattern ETCD_SHAPE = Pattern.compile("[A-Za-z]+\\.[0-9]+");

    /** The kind of {@code token}, by its shape. */
    public static TokenKind of(String token) {
        if (JWT_SHAPE.matcher(token).matches()) {
            return JWT;
        }
        if (ETCD_SHAPE.matcher(token).matches()) {
            return ETCD;
        }
        return OPAQUE;
    }
}
