package io.watchfanout.fanout.security;

/**
 * The security flags name something the node cannot use: a token, key or policy file that cannot
 * be read or parsed, or etcd refusing to show its roles. The message is one line that names the
 * flag, for the operator; the node exits 1 without a stack trace.
 */
public final class SecuritySetupException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong, starting with the flag */
    public SecuritySetupException(String message, Throwable cause) {
        super(message, cause);
    }
}
