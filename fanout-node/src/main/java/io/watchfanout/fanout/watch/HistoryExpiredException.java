package io.watchfanout.fanout.watch;

/**
 * A read asked for history that the cache no longer holds: etcd's "required revision has
 * been compacted", Kubernetes' 410 Gone with reason {@code Expired}. The client must list again.
 * Watches and lists of the node get theirs from {@code Expiry}, the one place that decides them.
 */
public final class HistoryExpiredException extends Exception {
    private static final long serialVersionUID = 1L;

    private final long requested;
    private final long oldestServable;

    /**
     * @param message what is too old and what the oldest servable point is, for the client
     * @param requested the revision asked for
     * @param oldestServable the oldest revision the cache can serve from
     */
    public HistoryExpiredException(String message, long requested, long oldestServable) {
        super(message);
        this.requested = requested;
        this.oldestServable = oldestServable;
    }

    /** The revision asked for. */
    public long requested() {
        return requested;
    }

    /** The oldest revision the cache could serve from when this was thrown. */
    long oldestServable() {
        return oldestServable;
    }
}
