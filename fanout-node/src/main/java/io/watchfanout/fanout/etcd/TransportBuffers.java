package io.watchfanout.fanout.etcd;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * The pool of the etcd API's transport buffers: every response a Watch stream sends is copied
 * into one of them and freed once written to the socket. It is grpc-netty's pool as grpc builds it
 * (direct memory, Netty's arenas and thread caches) with smaller chunks and fewer arenas, and the
 * node's own, so that its direct memory shows in the node's metrics
 * ({@code watchfanout_etcd_api_transport_buffer_bytes}): with 5,000 Watch streams it was the
 * largest part of a node's memory outside the heap (docs/BENCHMARKS.md, "The etcd API's memory").
 *
 * <p>A response's buffer is of the response's size ({@link #expect}), where grpc asks for at
 * least {@link #GRPC_SMALLEST} bytes for any message ({@code NettyWritableBufferAllocator}): a
 * response of one 1.1 KiB event took 4 KiB, one of a 200 B event too. Packed at their size, the
 * responses of an event for thousands of streams touch a third of the memory or less, and the
 * node delivered about 30 % more per CPU-second at 5,000 streams (docs/BENCHMARKS.md).
 *
 * <p>One pool per JVM, as grpc's is. Thread-safe (Netty's allocator; the expected size is the
 * calling thread's).
 */
final class TransportBuffers {
    /**
     * 8 KiB pages, 2^6 of them, 512 KiB per chunk (grpc's: 2 MiB). Netty frees a chunk only when
     * next to nothing in it is in use: after 5,000 streams attached at once, grpc's chunks kept
     * 90 MiB for a few KiB in use, these 33-49 MiB.
     */
    private static final int MAX_ORDER = 6;

    /**
     * Direct arenas: one per four event loops (grpc's: one per event loop). Each arena keeps chunks
     * that the buffers of each size class have used, so that after a burst of responses 4 arenas
     * kept 27-39 MiB of chunks with nothing in use, 1 arena 10-13 MiB, at the same CPU per
     * delivery: nearly every buffer comes from, and goes back to, its event loop's thread cache, not
     * its arena.
     */
    private static final int DIRECT_ARENAS = Math.max(1, PooledByteBufAllocator.defaultNumDirectArena() / 4);

    /** The capacity grpc-netty asks for when a message is smaller: its {@code MIN_BUFFER}. */
    static final int GRPC_SMALLEST = 4096;

    /** grpc's length-prefixed message header: a compressed flag and a 4-byte length. */
    static final int GRPC_MESSAGE_HEADER = 5;

    /** The calling thread's next message, in bytes with grpc's header; 0 when none is expected. */
    private static final FastThreadLocal<int[]> EXPECTED = new FastThreadLocal<>() {
        @Override
        protected int[] initialValue() {
            return new int[1];
        }
    };

    /** The pool: the allocator of the etcd API's channels. */
    static final PooledByteBufAllocator POOL = new SizedPool();

    private TransportBuffers() {}

    /**
     * Tells the pool that the calling thread is about to hand grpc a message of {@code messageBytes}
     * (0: no message; call it so after the hand-over): grpc copies it into a buffer it asks the
     * pool for at once, on this thread, and this is its size. The next buffer of grpc's smallest
     * size that the thread asks for is of this size instead.
     */
    static void expect(int messageBytes) {
        EXPECTED.get()[0] = messageBytes == 0 ? 0 : messageBytes + GRPC_MESSAGE_HEADER;
    }

    /** Bytes of direct memory the pool holds from the operating system (its arenas' chunks). */
    static long allocatedBytes() {
        return POOL.metric().usedDirectMemory();
    }

    /**
     * Bytes of the pool's direct memory that buffers in use pin (not those freed into a thread's
     * cache).
     */
    static long inUseBytes() {
        return POOL.pinnedDirectMemory();
    }

    /**
     * grpc's pool with smaller chunks and fewer arenas, whose buffer of a message is of the size
     * {@link #expect}ed.
     */
    private static final class SizedPool extends PooledByteBufAllocator {
        SizedPool() {
            super(
                    true,
                    defaultNumHeapArena(),
                    DIRECT_ARENAS,
                    defaultPageSize(),
                    MAX_ORDER,
                    defaultSmallCacheSize(),
                    defaultNormalCacheSize(),
                    defaultUseCacheForAllThreads());
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            if (initialCapacity == GRPC_SMALLEST && maxCapacity == GRPC_SMALLEST) {
                int[] expected = EXPECTED.get();
                int size = expected[0];
                if (size > 0 && size < GRPC_SMALLEST) {
                    // Once: grpc's framer asks for one buffer per message that fits it.
                    expected[0] = 0;
                    return super.newDirectBuffer(size, size);
                }
            }
            return super.newDirectBuffer(initialCapacity, maxCapacity);
        }
    }
}
