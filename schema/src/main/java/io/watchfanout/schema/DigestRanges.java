package io.watchfanout.schema;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.DigestRange;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Names where a reader's state differs from a {@code StateDigest}: the first of the digest's
 * sub-ranges whose key count or hash differs. The reader's state may be newer than the digest:
 * the events after the digest's revision are undone on the sums (each event's new key-value
 * subtracted, the one before it added), so a reader needs its state now and the events since.
 * Costs a pass over the state: meant for after {@link DigestVerifier} found a difference.
 *
 * <p>Stateless and thread-safe.
 */
public final class DigestRanges {
    private static final Comparator<ByteString> KEY_ORDER = ByteString.unsignedLexicographicalComparator();

    private DigestRanges() {}

    /** The first sub-range that differs, with the digest's figures and the reader's. */
    public record Difference(
            int index, ByteString start, ByteString end, long expectedKeys, long actualKeys, boolean hashDiffers) {
        @Override
        public String toString() {
            return "keys [" + start.toStringUtf8() + ", " + (end.isEmpty() ? "end" : end.toStringUtf8()) + "): "
                    + actualKeys + " keys where etcd has " + expectedKeys
                    + (hashDiffers && actualKeys == expectedKeys ? ", values differ" : "");
        }
    }

    /**
     * Compares the reader's state, taken back to the digest's revision, range by range.
     *
     * @param digest what etcd held at {@code digest.revision}
     * @param stateNow every key-value the reader holds now, in any order
     * @param eventsAfter every event the reader applied after {@code digest.revision}, in any order
     * @return the first sub-range that differs, or empty when all are equal
     */
    public static Optional<Difference> firstDifference(
            StateDigest digest, Iterable<KeyValue> stateNow, Iterable<Event> eventsAfter) {
        List<DigestRange> ranges = digest.getRangesList();
        StateHash[] actual = new StateHash[ranges.size()];
        for (int i = 0; i < actual.length; i++) {
            actual[i] = new StateHash();
        }
        for (KeyValue kv : stateNow) {
            actual[rangeOf(ranges, kv.getKey())].add(kv);
        }
        for (Event e : eventsAfter) {
            StateHash h = actual[rangeOf(ranges, e.getKv().getKey())];
            if (e.getType() == Event.Type.PUT) {
                h.remove(e.getKv());
            }
            if (e.hasPrevKv()) {
                h.add(e.getPrevKv());
            }
        }
        for (int i = 0; i < actual.length; i++) {
            DigestRange r = ranges.get(i);
            if (actual[i].hash() != r.getHash() || actual[i].keyCount() != r.getKeyCount()) {
                ByteString end = i + 1 < ranges.size() ? ranges.get(i + 1).getStart() : ByteString.EMPTY;
                return Optional.of(new Difference(
                        i, r.getStart(), end, r.getKeyCount(), actual[i].keyCount(), actual[i].hash() != r.getHash()));
            }
        }
        return Optional.empty();
    }

    /** The index of the last range whose start is at or before {@code key} (0 if none). */
    private static int rangeOf(List<DigestRange> ranges, ByteString key) {
        int lo = 0;
        int hi = ranges.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (KEY_ORDER.compare(ranges.get(mid).getStart(), key) <= 0) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
