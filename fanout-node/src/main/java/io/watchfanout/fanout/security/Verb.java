package io.watchfanout.fanout.security;

import java.util.Locale;

/**
 * What a request does with a key range, as a policy rule names it. The etcd API maps onto them as
 * etcd's own permissions do: {@code Watch} is {@link #WATCH}, {@code Range} is {@link #READ},
 * {@code Put}/{@code DeleteRange}/{@code Txn} writes are {@link #WRITE} (forwarded to etcd).
 */
public enum Verb {
    /** Open a watch on the range (HTTP {@code /v1/watch}, etcd {@code Watch}, gateway {@code /v3/watch}). */
    WATCH,
    /** Read the range (HTTP {@code /v1/kv}, etcd {@code Range}, gateway {@code /v3/kv/range}). */
    READ,
    /** Change keys of the range through the node (forwarded to etcd). */
    WRITE;

    /** The rule's spelling: {@code watch}, {@code read}, {@code write}. */
    public String ruleName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The verb a rule names.
     *
     * @throws IllegalArgumentException for any other word (the message lists the verbs)
     */
    public static Verb ofRuleName(String word) {
        for (Verb v : values()) {
            if (v.ruleName().equals(word)) {
                return v;
            }
        }
        throw new IllegalArgumentException("unknown verb \"" + word + "\" (expected: watch, read or write)");
    }
}
