package io.watchfanout.common;

import com.google.protobuf.ByteString;
import java.util.Comparator;
import java.util.Objects;

/**
 * A range of etcd keys in etcd's convention: a single key, or the half-open interval
 * {@code [start, end)} in unsigned byte order, where an unbounded end (etcd's range end
 * {@code "\0"}) means every key {@code >= start}.
 *
 * <p>Immutable and thread-safe.
 */
public final class KeyRange {
    /**
     * Unsigned lexicographic order of keys, the order etcd sorts keys in. The same order as
     * {@link ByteString#unsignedLexicographicalComparator()}, which allocates two iterators per
     * compare; this one reads bytes in place, since the watcher index and a rebuild's million
     * map inserts compare keys with long common prefixes ({@code /registry/pods/...}).
     */
    public static final Comparator<ByteString> KEY_ORDER = KeyRange::compareKeys;

    private static final ByteString RANGE_END_ALL = ByteString.copyFrom(new byte[] {0});

    private final ByteString start;
    /** Exclusive end; {@code null} when unbounded. Equal to start's successor for one key. */
    private final ByteString end;

    private final boolean singleKey;

    private KeyRange(ByteString start, ByteString end, boolean singleKey) {
        this.start = Objects.requireNonNull(start, "start");
        this.end = end;
        this.singleKey = singleKey;
    }

    /** The range holding exactly {@code key}. */
    public static KeyRange single(ByteString key) {
        return new KeyRange(key, key.concat(RANGE_END_ALL), true);
    }

    /**
     * Every key that starts with {@code prefix}, as etcd's {@code WithPrefix}: the empty
     * prefix (or one of only {@code 0xff} bytes) has no upper bound.
     */
    public static KeyRange prefix(ByteString prefix) {
        return new KeyRange(prefix, prefixEnd(prefix), false);
    }

    /**
     * etcd's {@code [key, rangeEnd)}: {@code rangeEnd = "\0"} means every key {@code >= key};
     * an empty {@code rangeEnd} means the single key.
     *
     * @throws IllegalArgumentException if {@code rangeEnd} is not after {@code key}
     */
    public static KeyRange of(ByteString key, ByteString rangeEnd) {
        if (rangeEnd.isEmpty()) {
            return single(key);
        }
        if (rangeEnd.equals(RANGE_END_ALL)) {
            return new KeyRange(key, null, false);
        }
        if (KEY_ORDER.compare(rangeEnd, key) <= 0) {
            throw new IllegalArgumentException("range end must sort after the key");
        }
        return new KeyRange(key, rangeEnd, false);
    }

    /** Every key. */
    public static KeyRange all() {
        return new KeyRange(ByteString.EMPTY, null, false);
    }

    /**
     * etcd's {@code GetPrefixRangeEnd}: the smallest key greater than every key with this
     * prefix, or {@code null} (unbounded) when the prefix is empty or all {@code 0xff}.
     */
    public static ByteString prefixEnd(ByteString prefix) {
        byte[] end = prefix.toByteArray();
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return ByteString.copyFrom(end, 0, i + 1);
            }
        }
        return null;
    }

    /** The first key of the range (inclusive). */
    public ByteString start() {
        return start;
    }

    /** The exclusive end of the range, or {@code null} when unbounded. */
    public ByteString end() {
        return end;
    }

    /**
     * The key of an etcd range request for this range: {@link #start()}, or {@code "\0"} when
     * the start is empty (etcd rejects an empty key; {@code "\0"} up to range end {@code "\0"} is
     * every key).
     */
    public ByteString requestKey() {
        return start.isEmpty() ? RANGE_END_ALL : start;
    }

    /**
     * The range end of an etcd range request for this range, as etcd's {@code range_end} field
     * takes it: empty for a single key, {@code "\0"} when unbounded, else {@link #end()}.
     */
    public ByteString requestRangeEnd() {
        if (singleKey) {
            return ByteString.EMPTY;
        }
        return end == null ? RANGE_END_ALL : end;
    }

    /** True when the range holds exactly one key ({@link #start()}). */
    public boolean isSingleKey() {
        return singleKey;
    }

    /** True when {@code key} lies in this range. */
    public boolean contains(ByteString key) {
        if (singleKey) {
            return start.equals(key);
        }
        return KEY_ORDER.compare(key, start) >= 0 && (end == null || KEY_ORDER.compare(key, end) < 0);
    }

    /** True when {@code key} sorts at or after the end of this range. */
    public boolean isAfterEnd(ByteString key) {
        return end != null && KEY_ORDER.compare(key, end) >= 0;
    }

    /** {@link #KEY_ORDER}: negative, zero or positive as {@code a} sorts before, with or after {@code b}. */
    public static int compareKeys(ByteString a, ByteString b) {
        int n = Math.min(a.size(), b.size());
        for (int i = 0; i < n; i++) {
            int c = (a.byteAt(i) & 0xff) - (b.byteAt(i) & 0xff);
            if (c != 0) {
                return c;
            }
        }
        return a.size() - b.size();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyRange
                && ((KeyRange) o).start.equals(start)
                && Objects.equals(((KeyRange) o).end, end)
                && ((KeyRange) o).singleKey == singleKey;
    }

    @Override
    public int hashCode() {
        return Objects.hash(start, end, singleKey);
    }

    @Override
    public String toString() {
        return singleKey
                ? "key " + printable(start)
                : "[" + printable(start) + ", " + (end == null ? "+inf" : printable(end)) + ")";
    }

    /**
     * A key for log lines and error messages, percent-encoded as the API and the command line
     * take keys ({@link KeyBytes#encode}: printable ASCII kept, other bytes as {@code %XX}), so
     * that a key in a message can be pasted back into a request.
     */
    public static String printable(ByteString key) {
        return KeyBytes.encode(key.toByteArray());
    }
}
