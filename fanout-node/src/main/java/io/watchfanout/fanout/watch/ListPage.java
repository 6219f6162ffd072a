package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteString;
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
 */
public record ListPage(List<KeyValue> kvs, long revision, ByteString nextKey, long remaining) {
    /** A page whose remaining key-values were not counted. */
    public ListPage(List<KeyValue> kvs, long revision, ByteString nextKey) {
        this(kvs, revision, nextKey, -1);
    }
}
