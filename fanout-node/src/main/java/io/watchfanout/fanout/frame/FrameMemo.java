package io.watchfanout.fanout.frame;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.function.Supplier;

/**
 * A fixed number of lazily built frames, each built at most once: the read is a volatile
 * (acquire) load; the build is double-checked under this object's monitor, so that two
 * threads wanting the same missing frame never both encode it (docs/ARCHITECTURE.md, invariant 6, counts encodes).
 * Frames stored with an accounting encoder are counted in its memoized-frames gauges until
 * {@link #release()}.
 *
 * <p>Thread-safe.
 */
final class FrameMemo {
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(ByteBuffer[].class);

    private final ByteBuffer[] slots;
    /** Guarded by this; once set, nothing is memoized any more. */
    private boolean released;
    /** Guarded by this: where the stored frames are counted, and how many. */
    private FrameEncoder accountedTo;

    private int accountedFrames;
    private long accountedBytes;

    FrameMemo(int size) {
        slots = new ByteBuffer[size];
    }

    /**
     * The frame in {@code slot}, built by {@code build} on first need.
     *
     * @param accountTo the encoder whose memoized-frames gauges count the stored frame, or null
     *     (a view of another slot's bytes, or a memo outside the history window)
     */
    ByteBuffer get(int slot, FrameEncoder accountTo, Supplier<ByteBuffer> build) {
        ByteBuffer frame = (ByteBuffer) SLOTS.getAcquire(slots, slot);
        if (frame != null) {
            return frame;
        }
        synchronized (this) {
            frame = (ByteBuffer) SLOTS.getAcquire(slots, slot);
            if (frame == null) {
                frame = build.get();
                if (!released) {
                    SLOTS.setRelease(slots, slot, frame);
                    if (accountTo != null) {
                        accountTo.memoAdded(frame);
                        accountedTo = accountTo;
                        accountedFrames++;
                        accountedBytes += frame.capacity();
                    }
                }
            }
            return frame;
        }
    }

    /** The frame in {@code slot} if it was built and not released, else null. */
    ByteBuffer peek(int slot) {
        return (ByteBuffer) SLOTS.getAcquire(slots, slot);
    }

    /** Drops the frames and stops memoizing: later gets build unshared frames. */
    synchronized void release() {
        released = true;
        for (int i = 0; i < slots.length; i++) {
            SLOTS.setRelease(slots, i, (ByteBuffer) null);
        }
        if (accountedTo != null) {
            accountedTo.memoReleased(accountedFrames, accountedBytes);
            accountedTo = null;
            accountedFrames = 0;
            accountedBytes = 0;
        }
    }
}
