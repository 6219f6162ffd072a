package io.watchfanout.fanout.frame;

/** What a frame carries; encodes are counted per kind and encoding. */
public enum FrameKind {
    /** An etcd event (ADDED, MODIFIED, DELETED) as it happened, memoized with its cached event. */
    EVENT,
    /** The ADDED frame of a key's current state, sent as an initial event (sendInitialEvents). */
    INITIAL,
    /** A BOOKMARK, memoized per revision. */
    BOOKMARK,
    /** An ERROR frame. */
    ERROR,
    /**
     * An event seen by a watcher whose selector its object entered with this change (the object
     * before it did not match): ADDED with the new object, as kube-apiserver's {@code cacheWatcher}
     * turns such a MODIFIED. Memoized with the cached event.
     */
    ENTERED,
    /**
     * An event seen by a watcher whose selector its object left with this change: DELETED with
     * the object as it was before, at the event's revision (kube-apiserver's {@code cacheWatcher}).
     * Memoized with the cached event.
     */
    LEFT
}
