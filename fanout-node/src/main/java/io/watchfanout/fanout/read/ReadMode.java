package io.watchfanout.fanout.read;

/**
 * How the revision of a get or list is chosen, as kube-apiserver decides it from
 * {@code resourceVersion}, {@code resourceVersionMatch}, {@code limit} and {@code continue}
 * ({@link ListRules} has the table).
 */
public enum ReadMode {
    /** No resourceVersion: etcd's current revision or newer (a consistent read, with an etcd endpoint). */
    MOST_RECENT,
    /** resourceVersion=0: the node's revision, whatever it is. */
    ANY,
    /** A revision {@code >= resourceVersion}: the node's, after waiting for it to get there. */
    NOT_OLDER_THAN,
    /** Exactly {@code resourceVersion}, from the history window (after waiting if it is ahead). */
    EXACT,
    /** A later page: the token's revision, from its next key. */
    CONTINUE
}
