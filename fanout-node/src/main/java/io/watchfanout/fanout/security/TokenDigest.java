package io.watchfanout.fanout.security;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The SHA-256 of a token, the key tokens are remembered by: a map keyed by it never compares a
 * presented secret with a stored one byte by byte, and a heap dump holds no usable token.
 */
final class TokenDigest {
    private TokenDigest() {}

    /** The SHA-256 of {@code token}, comparable with {@link ByteBuffer#equals}. */
    static ByteBuffer of(byte[] token) {
        try {
            return ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(token));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
