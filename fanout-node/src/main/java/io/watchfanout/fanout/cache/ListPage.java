package io.watchfanout.fanout.cache;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.KeyValue;
import java.util.List;

/**
 * One page of a range read.
 *
 * @param kvs the key-values, in key order
 * @param revision the revision the page was read at
 * @param nextKey the first key of the next page, or {@code null} on the last page
 */
public record ListPage(List<KeyValue> kvs, long revision, ByteString nextKey) {}
