package io.watchfanout.common.tls;

/**
 * A certificate, key or CA bundle that cannot be used: a missing or unreadable file, PEM that
 * does not parse, a private key that does not match its certificate. The message is one line
 * that starts with the flag and the file, e.g. {@code --tls-key-file /etc/tls/key.pem: ...}, so
 * that a runnable can print it as its startup error as is.
 */
public final class TlsMaterialException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message one line naming the flag, the file and what is wrong with it */
    public TlsMaterialException(String message) {
        super(message);
    }

    /** As {@link #TlsMaterialException(String)}, with the failure underneath. */
    public TlsMaterialException(String message, Throwable cause) {
        super(message, cause);
    }
}
