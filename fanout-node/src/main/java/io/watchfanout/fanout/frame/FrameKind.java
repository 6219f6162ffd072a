package io.watchfanout.fanout.frame;

/** What a frame carries; encodes are counted per kind and encoding. */
public enum FrameKind {
    /** An etcd event (ADDED, MODIFIED, DELETED), memoized with its cached event. */
    EVENT,
    /** The ADDED frame of a key's current state, sent as an initial event (sendInitialEvents). */
    INITIAL,
    /** A BOOKMARK, memoized per revision. */
    BOOKMARK,
    /** An ERROR frame. */
    ERROR
}
