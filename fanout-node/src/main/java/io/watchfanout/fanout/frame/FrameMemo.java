package io.watchfanout.fanout.frame;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * Lazily built frames in numbered slots, each built at most once: the read is two acquire loads
 * (the slot array, then the slot); the build is double-checked under this object's monitor, so
 * that two threads wanting the same missing frame never both encode it (docs/ARCHITECTURE.md,
 * invariant 6, counts encodes). The slot array is allocated on the first build, just long enough
 * for that slot, and grown under the monitor when a higher slot is built: an event that only one
 * encoding's watchers see holds one encoding's slots. Frames stored with an accounting encoder
 * are counted in its memoized-frames gauges until {@link #release()}.
 *
 * <p>Thread-safe.
 */
final class FrameMemo {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(ByteBuffer[].class);
    private static final ByteBuffer[] NONE = new ByteBuffer[0];

    /** Replaced (never written in place once published) only under this object's monitor. */
    private volatile ByteBuffer[] slots = NONE;
    /** Guarded by this; once set, nothing is memoized any more. */
    private boolean released;
    /** Guarded by this: where the stored frames are counted, and how many. */
    private FrameEncoder accountedTo;

    private int accountedFrames;
    private long accountedBytes;

    /**
     * The frame in {@code slot}, built by {@code build} on first need.
     *
     * @param accountTo the encoder whose memoized-frames gauges count the stored frame, or null
     *     (a view of another slot's bytes, or a memo outside the history window)
     */
    ByteBuffer get(int slot, FrameEncoder accountTo, Supplier<ByteBuffer> build) {
        ByteBuffer frame = peek(slot);
        if (frame != null) {
            return frame;
        }
        synchronized (this) {
            frame = peek(slot);
            if (frame == null) {
                frame = build.get();
                if (!released) {
                    ByteBuffer[] s = slots;
                    if (slot >= s.length) {
                        // A new array, published whole: readers see either the old or the new one.
                        s = Arrays.copyOf(s, slot + 1);
                        SLOT.setRelease(s, slot, frame);
                        slots = s;
                    } else {
                        SLOT.setRelease(s, slot, frame);
                    }
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
        ByteBuffer[] s = slots;
        return slot < s.length ? (ByteBuffer) SLOT.getAcquire(s, slot) : null;
    }

    /** Drops the frames and stops memoizing: later gets build unshared frames. */
    synchronized void release() {
        released = true;
        slots = NONE;
        if (accountedTo != null) {
            accountedTo.memoReleased(accountedFrames, accountedBytes);
            accountedTo = null;
            accountedFrames = 0;
            accountedBytes = 0;
        }
    }
}
