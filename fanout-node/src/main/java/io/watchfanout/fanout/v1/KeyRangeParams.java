package io.watchfanout.fanout.v1;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpStatuses;
import io.watchfanout.fanout.transport.QueryParams;

/** Reads the key range of {@code /v1/watch} and {@code /v1/kv}: {@code key}, {@code prefix}, {@code rangeEnd}. */
final class KeyRangeParams {
    private KeyRangeParams() {}

    /**
     * @throws ApiException 400 when {@code key} is missing, empty without a range, combined
     *     with both prefix and rangeEnd, or before a range end that does not sort after it
     */
    static KeyRange parse(QueryParams q) throws ApiException {
        ByteString key = q.bytes("key");
        if (key == null) {
            throw new ApiException(HttpStatuses.badRequest(
                    "parameter key is missing (expected: the etcd key, percent-encoded bytes)"));
        }
        boolean prefix = q.bool("prefix");
        ByteString rangeEnd = q.bytes("rangeEnd");
        if (prefix && rangeEnd != null) {
            throw new ApiException(HttpStatuses.badRequest(
                    "parameters prefix and rangeEnd are both given (expected: at most one of them)"));
        }
        if (prefix) {
            return KeyRange.prefix(key);
        }
        if (rangeEnd != null && !rangeEnd.isEmpty()) {
            try {
                return KeyRange.of(key, rangeEnd);
            } catch (IllegalArgumentException e) {
                throw new ApiException(HttpStatuses.badRequest("parameter rangeEnd: \""
                        + KeyRange.printable(rangeEnd) + "\" does not sort after key \"" + KeyRange.printable(key)
                        + "\" (expected: a greater key, or %00 for every key >= key)"));
            }
        }
        if (key.isEmpty()) {
            throw new ApiException(HttpStatuses.badRequest("parameter key is empty (expected: a non-empty "
                    + "etcd key, or prefix=true / rangeEnd=%00 for every key)"));
        }
        return KeyRange.single(key);
    }
}
