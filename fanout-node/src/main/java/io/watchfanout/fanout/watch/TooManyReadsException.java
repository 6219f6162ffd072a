package io.watchfanout.fanout.watch;

/**
 * A watch needs a read of older history and the node already runs its maximum number of them
 * ({@code --deep-read-max-readers}): HTTP 429 {@code TooManyRequests} with {@code Retry-After},
 * so that the client retries later or on another node.
 */
public final class TooManyReadsException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message what is exhausted, for the client */
    public TooManyReadsException(String message) {
        super(message);
    }
}
