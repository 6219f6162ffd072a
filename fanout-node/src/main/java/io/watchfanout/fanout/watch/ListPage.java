package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.schema.v1.KeyValue;
import java.util.List;

/**
 * One page of a range read.
 *
 * @param kvs the key-values, in key order
 * @param revision the revision the page was read at
 * @param nextKey the first key of the next page, or {@code null} on the last page
 * @param remaining the key-values from {@code nextKey} to the end of the range at {@code revision}
 *     (0 on the last page), or -1 when they were not counted
 * @param lastEvents for each key-value, the PUT that wrote it while that event is in the history
 *     window (its frames are memoized there, so a front end can render an item once per event),
 *     else null; an empty list when not known
 */
public record ListPage(
        List<KeyValue> kvs, long revision, ByteString nextKey, long remaining, List<CachedEvent> lastEvents) {
    /** A page without its key-values' events. */
    public ListPage(List<KeyValue> kvs, long revision, ByteString nextKey, long remaining) {
        this(kvs, revision, nextKey, remaining, List.of());
    }

    /** A page whose remaining key-values were not counted. */
    public ListPage(List<KeyValue> kvs, long revision, ByteString nextKey) {
        this(kvs, revision, nextKey, -1);
    }

    /** The PUT that wrote the {@code i}-th key-value, while it is in the history window, else null. */
    public CachedEvent lastEvent(int i) {
        return i < lastEvents.size() ? lastEvents.get(i) : null;
    }
}
