package io.watchfanout.fanout.kafka;

import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateRecord;

/**
 * One value of {@code <prefix>.state} as the rebuild keeps it ({@link StateValueDeserializer}).
 *
 * @param key the key-value's key bytes (the same array as {@code kv}'s key), or null for a record
 *     without a key-value
 * @param kv the key-value, its value in the rebuild's arena; null for a record without one, and for a
 *     deleted key (a tombstone kept in the rebuild's list)
 * @param other a record that holds no key-value (the checkpoint), else null
 */
public record StateValue(byte[] key, KeyValue kv, StateRecord other) {
    /** The deletion of {@code key}: a tombstone, in the rebuild's list of records read. */
    public static StateValue deleted(byte[] key) {
        return new StateValue(key, null, null);
    }
}
