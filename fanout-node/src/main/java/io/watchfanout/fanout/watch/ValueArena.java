package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The values of the cached state in a few large chunks instead of one array each: a chunk is
 * sized to whole G1 regions (at least 4 MiB), so that G1 allocates it as a humongous object,
 * directly in the old generation, and never copies it. A rebuild of a million 1 KiB values then
 * leaves young collections with nothing large to copy (docs/BENCHMARKS.md, "rebuild").
 *
 * <p>A value is stored once and never changes; {@link #copy} returns a {@link ByteString} view of
 * its bytes in the chunk. Replaced and deleted values leave holes: {@link #release} counts them, and
 * a chunk with less than half of its bytes live (other than the one being filled) is handed out by
 * {@link #nextSparse} for its owner to move its live values on ({@code WatchCache}), after which the
 * chunk is {@link #drop}ped. A dropped chunk is never written again, so views that readers still hold
 * stay valid; the garbage collector frees it when the last view is gone. Each chunk remembers the
 * keys of the values stored in it, so that moving them needs no scan of the whole state.
 *
 * <p>Values larger than half a chunk are copied into an array of their own (no chunk). The empty
 * value is {@link ByteString#EMPTY}.
 *
 * <p>Not thread-safe: one owner at a time (the rebuild's feed thread, then the cache under the
 * core's lock). Views may be read from any thread once published under that lock.
 */
public final class ValueArena {
    /** The smallest chunk, bytes; chunks are this rounded up to whole G1 regions. */
    static final int MIN_CHUNK_BYTES = 4 << 20;
    /** A byte array's header with compressed class pointers: a chunk plus it fills whole regions. */
    private static final int ARRAY_HEADER_BYTES = 16;

    private final int chunkBytes;
    private final Map<byte[], Chunk> chunks = new IdentityHashMap<>();
    private final ArrayDeque<Chunk> sparse = new ArrayDeque<>();
    private final Locator locator = new Locator();
    private Chunk current;
    private long liveBytes;

    /** An arena with chunks of whole G1 regions (at least {@value #MIN_CHUNK_BYTES} bytes). */
    public ValueArena() {
        this(defaultChunkBytes());
    }

    /**
     * @param chunkBytes the bytes of a chunk, {@code >= 16} (tests use small ones)
     * @throws IllegalArgumentException if {@code chunkBytes < 16}
     */
    public ValueArena(int chunkBytes) {
        if (chunkBytes < 16) {
            throw new IllegalArgumentException("chunk of " + chunkBytes + " bytes (expected: >= 16)");
        }
        this.chunkBytes = chunkBytes;
    }

    /**
     * Stores {@code value}, the value of {@code key}, and returns a view of the stored bytes.
     *
     * @param key the key the value belongs to, remembered for {@link #nextSparse}'s chunk
     * @param value the bytes to store, read from its position to its limit (the position does not move)
     */
    public ByteString copy(ByteString key, ByteBuffer value) {
        return copy(key, value, value.position(), value.remaining());
    }

    /**
     * As {@link #copy(ByteString, ByteBuffer)}, the {@code length} bytes of {@code source} at
     * {@code offset} (absolute; neither its position nor its limit is used or moved).
     *
     * @throws IndexOutOfBoundsException if the bytes are not all within {@code source}'s capacity
     */
    public ByteString copy(ByteString key, ByteBuffer source, int offset, int length) {
        if (length == 0) {
            return ByteString.EMPTY;
        }
        if (length > chunkBytes / 2) {
            return ByteString.copyFrom(source.slice(offset, length));
        }
        Chunk c = chunkFor(length);
        source.get(offset, c.bytes, c.used, length);
        liveBytes += length;
        return c.add(key, length);
    }

    /** As {@link #copy(ByteString, ByteBuffer)} from a {@link ByteString} (a flat one is read in place). */
    public ByteString copy(ByteString key, ByteString value) {
        return value.isEmpty() ? ByteString.EMPTY : copy(key, value.asReadOnlyByteBuffer());
    }

    /** Whether {@code value} is a view of bytes stored in this arena (and not dropped). */
    public boolean holds(ByteString value) {
        return chunkOf(value) != null;
    }

    /**
     * Counts {@code value}'s bytes as a hole, once it is no longer the state of its key; a value
     * not stored here is ignored. Call at most once per stored value.
     */
    public void release(ByteString value) {
        Chunk c = chunkOf(value);
        if (c == null) {
            return;
        }
        c.live -= value.size();
        liveBytes -= value.size();
        if (c != current && !c.queued && c.live * 2 < c.used) {
            c.queued = true;
            sparse.add(c);
        }
    }

    /** A chunk less than half live, to move its live values out of and then {@link #drop}; null when none. */
    Chunk nextSparse() {
        return sparse.poll();
    }

    /** Whether {@code value} is stored in {@code chunk}. */
    boolean isIn(Chunk chunk, ByteString value) {
        return chunkOf(value) == chunk;
    }

    /** Forgets {@code chunk} (its values were moved); its bytes stay as they are for views still held. */
    void drop(Chunk chunk) {
        if (chunks.remove(chunk.bytes) != null) {
            liveBytes -= chunk.live;
        }
        if (chunk == current) {
            current = null;
        }
    }

    /** Bytes of live values in the chunks. */
    long liveBytes() {
        return liveBytes;
    }

    /** Bytes of the chunks held (live values, holes and the unfilled end of the current chunk). */
    long chunkBytesHeld() {
        return (long) chunks.size() * chunkBytes;
    }

    /** Chunks held. */
    int chunkCount() {
        return chunks.size();
    }

    private Chunk chunkFor(int n) {
        if (current == null || current.used + n > chunkBytes) {
            Chunk previous = current;
            current = new Chunk(new byte[chunkBytes]);
            chunks.put(current.bytes, current);
            if (previous != null && !previous.queued && previous.live * 2 < previous.used) {
                previous.queued = true;
                sparse.add(previous);
            }
        }
        return current;
    }

    private Chunk chunkOf(ByteString value) {
        if (value.isEmpty()) {
            return null;
        }
        byte[] array = locator.arrayOf(value);
        return array == null ? null : chunks.get(array);
    }

    /**
     * Chunks of whole G1 regions, at least {@link #MIN_CHUNK_BYTES}: a humongous object takes whole
     * regions, so a chunk of 4 MiB plus its header would waste most of a region. Without G1 (or without
     * its region size) 4 MiB.
     */
    static int defaultChunkBytes() {
        long region = 0;
        try {
            com.sun.management.HotSpotDiagnosticMXBean hotspot =
                    ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (hotspot != null && "true".equals(hotspot.getVMOption("UseG1GC").getValue())) {
                region = Long.parseLong(hotspot.getVMOption("G1HeapRegionSize").getValue());
            }
        } catch (RuntimeException e) {
            region = 0;
        }
        if (region <= 0 || region > Integer.MAX_VALUE / 4) {
            return MIN_CHUNK_BYTES;
        }
        long regions = Math.max(1, (MIN_CHUNK_BYTES + ARRAY_HEADER_BYTES + region - 1) / region);
        return (int) (regions * region - ARRAY_HEADER_BYTES);
    }

    /** One chunk: its bytes, how far it is filled, its live bytes and the keys stored in it. */
    static final class Chunk {
        private final byte[] bytes;
        private final List<ByteString> keys = new ArrayList<>();
        private int used;
        private long live;
        private boolean queued;

        private Chunk(byte[] bytes) {
            this.bytes = bytes;
        }

        /** The keys whose values were stored here, in order, some perhaps since replaced or deleted. */
        List<ByteString> keys() {
            return keys;
        }

        private ByteString add(ByteString key, int n) {
            ByteString view = UnsafeByteOperations.unsafeWrap(bytes, used, n);
            used += n;
            live += n;
            keys.add(key);
            return view;
        }
    }

    /**
     * Finds the array behind a flat {@link ByteString} without copying it: protobuf hands a
     * {@link ByteOutput} the backing array of a literal or bounded string ({@code writeLazy}).
     */
    private static final class Locator extends ByteOutput {
        private byte[] array;
        private int calls;

        byte[] arrayOf(ByteString value) {
            array = null;
            calls = 0;
            try {
                UnsafeByteOperations.unsafeWriteTo(value, this);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return calls == 1 ? array : null;
        }

        @Override
        public void write(byte value) {
            calls = 2;
        }

        @Override
        public void write(byte[] value, int offset, int length) {
            calls = 2;
        }

        @Override
        public void writeLazy(byte[] value, int offset, int length) {
            array = value;
            calls++;
        }

        @Override
        public void write(ByteBuffer value) {
            calls = 2;
        }

        @Override
        public void writeLazy(ByteBuffer value) {
            calls = 2;
        }
    }
}
