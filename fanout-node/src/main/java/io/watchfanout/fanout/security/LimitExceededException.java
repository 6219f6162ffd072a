package io.watchfanout.fanout.security;

/**
 * A watch limit was reached (per identity: concurrent watches or new watches per second; per
 * node: {@code --max-watchers}): HTTP 429 {@code TooManyRequests} with {@code Retry-After}, so
 * that the client backs off or tries another node.
 */
public final class LimitExceededException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int retryAfterSeconds;

    /**
     * @param message which limit, its value and whose
     * @param retryAfterSeconds when to come back, {@code >= 1}
     */
    public LimitExceededException(String message, int retryAfterSeconds) {
        super(message, null, false, false);
        this.retryAfterSeconds = Math.max(1, retryAfterSeconds);
    }

    /** Seconds for the {@code Retry-After} header, {@code >= 1}. */
    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
