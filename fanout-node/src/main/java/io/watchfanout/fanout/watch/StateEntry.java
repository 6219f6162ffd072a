package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.schema.v1.KeyValue;

/**
 * The current state of one key in the watch cache.
 *
 * @param kv the key-value at the cache's revision
 * @param lastEvent the PUT that wrote {@code kv} while it is in the history window (its
 *     memoized initial-event frame is reused by sendInitialEvents), else {@code null}
 */
public record StateEntry(KeyValue kv, CachedEvent lastEvent) {}
