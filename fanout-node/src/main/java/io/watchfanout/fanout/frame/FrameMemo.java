package io.watchfanout.fanout.frame;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.function.Supplier;

/**
 * A fixed number of lazily built frames, each built at most once: the read is a volatile
 * (acquire) load; the build is double-checked under this object's monitor, so that two
 * threads wanting the same missing frame never both encode it (invariant 6 counts encodes).
 *
 * <p>Thread-safe.
 */
final class FrameMemo {
  private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(ByteBuffer[].class);

  private final ByteBuffer[] slots;
  /** Guarded by this; once set, nothing is memoized any more. */
  private boolean released;

  FrameMemo(int size) {
    slots = new ByteBuffer[size];
  }

  ByteBuffer get(int slot, Supplier<ByteBuffer> build) {
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
        }
      }
      return frame;
    }
  }

  /** Drops the frames and stops memoizing: later gets build unshared frames. */
  synchronized void release() {
    released = true;
    for (int i = 0; i < slots.length; i++) {
      SLOTS.setRelease(slots, i, (ByteBuffer) null);
    }
  }
}
