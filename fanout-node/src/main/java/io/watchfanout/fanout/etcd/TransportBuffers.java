package io.watchfanout.fanout.etcd;

import io.netty.buffer.PooledByteBufAllocator;

/**
 * The pool of the etcd API's transport buffers: every response a Watch stream sends is copied
 * into one of them (at least 4 KiB, grpc's smallest) and freed once written to the socket. It is
 * grpc-netty's pool as grpc builds it (direct memory, Netty's arenas and thread caches), with
 * smaller chunks, and the node's own, so that its direct memory shows in the node's metrics
 * ({@code watchfanout_etcd_api_transport_buffer_bytes}): with 5,000 Watch streams it was the
 * largest part of a node's memory outside the heap (docs/BENCHMARKS.md, "The etcd API's memory").
 *
 * <p>One pool per JVM, as grpc's is. Thread-safe (Netty's allocator).
 */
final class TransportBuffers {
    /**
     * 8 KiB pages, 2^6 of them, 512 KiB per chunk (grpc's: 2 MiB). Netty frees a chunk only when
     * next to nothing in it is in use: after 5,000 streams attached at once, grpc's chunks kept
     * 90 MiB for a few KiB in use, these 33-49 MiB.
     */
    private static final int MAX_ORDER = 6;

    static final PooledByteBufAllocator POOL = new PooledByteBufAllocator(
            true,
            PooledByteBufAllocator.defaultNumHeapArena(),
            PooledByteBufAllocator.defaultNumDirectArena(),
            PooledByteBufAllocator.defaultPageSize(),
            MAX_ORDER,
            PooledByteBufAllocator.defaultSmallCacheSize(),
            PooledByteBufAllocator.defaultNormalCacheSize(),
            PooledByteBufAllocator.defaultUseCacheForAllThreads());

    private TransportBuffers() {}

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
}
