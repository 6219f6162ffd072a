package io.watchfanout.schema;

import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import net.jpountz.xxhash.XXHash64;
import net.jpountz.xxhash.XXHashFactory;

/**
 * The hash of a set of key-values that a reader keeps up to date per event: the sum (mod 2^64)
 * of one 64-bit hash per key-value ({@link #entryHash}) and the key count. A sum does not depend
 * on the order in which key-values came, and an event changes it by its own key-values only
 * (add the new one, subtract the one before), so the cost is O(1) per event, with no scan. It
 * is the {@code hash} and {@code key_count} of a {@code StateDigest} (schema/README.md,
 * "Checking a state against etcd").
 *
 * <p>Not thread-safe: one instance per reader thread.
 */
public final class StateHash {
    private static final XXHash64 XXH64 = XXHashFactory.fastestJavaInstance().hash64();

    private long hash;
    private long keyCount;

    /** An empty set: hash 0, no keys. */
    public StateHash() {}

    /** A set with the given sum and key count (e.g. a copy, or state read from elsewhere). */
    public StateHash(long hash, long keyCount) {
        this.hash = hash;
        this.keyCount = keyCount;
    }

    /**
     * The hash of one key-value: XXH64 of the key (seed 0), then XXH64 of the value seeded with
     * that, then {@code create_revision}, {@code mod_revision} and {@code version} each mixed in
     * ({@code h = mix64(h ^ n)}, SplitMix64's finalizer). The lease is left out (etcd revokes
     * leases without a revision of the key's own). Thread-safe; allocates nothing.
     */
    public static long entryHash(KeyValue kv) {
        long h = XXH64.hash(kv.getKey().asReadOnlyByteBuffer(), 0);
        h = XXH64.hash(kv.getValue().asReadOnlyByteBuffer(), h);
        h = mix64(h ^ kv.getCreateRevision());
        h = mix64(h ^ kv.getModRevision());
        return mix64(h ^ kv.getVersion());
    }

    /** SplitMix64's finalizer: a bijection of 64-bit values that spreads every input bit. */
    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Adds a key-value that was not in the set. */
    public void add(KeyValue kv) {
        hash += entryHash(kv);
        keyCount++;
    }

    /** Removes a key-value that was in the set. */
    public void remove(KeyValue kv) {
        hash -= entryHash(kv);
        keyCount--;
    }

    /**
     * Applies one event of the events topic (resync entries included): the key-value before it
     * ({@code prev_kv}, when set) leaves the set, and for a {@code PUT} the new one enters it.
     */
    public void apply(Event event) {
        if (event.hasPrevKv()) {
            remove(event.getPrevKv());
        }
        if (event.getType() == Event.Type.PUT) {
            add(event.getKv());
        }
    }

    /** The sum of the entries' hashes, mod 2^64. */
    public long hash() {
        return hash;
    }

    /** The number of keys in the set. */
    public long keyCount() {
        return keyCount;
    }

    /** Whether this set's hash and key count equal the digest's. */
    public boolean matches(StateDigest digest) {
        return hash == digest.getHash() && keyCount == digest.getKeyCount();
    }

    @Override
    public String toString() {
        return keyCount + " keys, hash " + Long.toHexString(hash);
    }
}
