package io.watchfanout.schema;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.DigestRange;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;

/**
 * Builds the {@code StateDigest} of a watched range from its key-values at one revision, given
 * in ascending key order (as an etcd range returns them): the whole range's {@link StateHash},
 * and the same per sub-range of {@code keysPerRange} consecutive keys, so that a reader whose
 * state differs can name the first sub-range where it does ({@link DigestRanges}).
 *
 * <p>Not thread-safe.
 */
public final class StateDigestBuilder {
    private final long revision;
    private final int keysPerRange;
    private final StateHash whole = new StateHash();
    private final StateDigest.Builder digest = StateDigest.newBuilder();
    private StateHash range;
    private ByteString rangeStart = ByteString.EMPTY;
    private ByteString lastKey;

    /**
     * @param revision the etcd revision the key-values are read at, {@code > 0}
     * @param keysPerRange keys per sub-range, {@code >= 1} (a digest of n keys carries
     *     {@code ceil(n / keysPerRange)} sub-ranges, each one key and 18 bytes)
     */
    public StateDigestBuilder(long revision, int keysPerRange) {
        if (revision <= 0 || keysPerRange < 1) {
            throw new IllegalArgumentException("revision " + revision + ", keys per range " + keysPerRange);
        }
        this.revision = revision;
        this.keysPerRange = keysPerRange;
    }

    /**
     * Adds the next key-value.
     *
     * @throws IllegalArgumentException if its key is not greater than the previous one's
     */
    public void add(KeyValue kv) {
        ByteString key = kv.getKey();
        if (lastKey != null && ByteString.unsignedLexicographicalComparator().compare(lastKey, key) >= 0) {
            throw new IllegalArgumentException(
                    "keys out of order: " + key.toStringUtf8() + " after " + lastKey.toStringUtf8());
        }
        if (range != null && range.keyCount() == keysPerRange) {
            closeRange();
            rangeStart = key;
        }
        if (range == null) {
            range = new StateHash();
        }
        range.add(kv);
        whole.add(kv);
        lastKey = key;
    }

    private void closeRange() {
        digest.addRanges(DigestRange.newBuilder()
                .setStart(rangeStart)
                .setKeyCount(range.keyCount())
                .setHash(range.hash()));
        range = null;
    }

    /** The digest of everything added; the builder must not be used afterwards. */
    public StateDigest build() {
        if (range != null || digest.getRangesCount() == 0) {
            if (range == null) {
                range = new StateHash();
            }
            closeRange();
        }
        return digest.setRevision(revision)
                .setKeyCount(whole.keyCount())
                .setHash(whole.hash())
                .build();
    }
}
