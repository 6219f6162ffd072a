package io.watchfanout.fanout.testing;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** A clock in milliseconds that moves only when a test advances it. */
public final class FakeClock implements LongSupplier {
    private final AtomicLong millis = new AtomicLong(1_000_000);

    @Override
    public long getAsLong() {
        return millis.get();
    }

    public void advance(Duration d) {
        millis.addAndGet(d.toMillis());
    }
}
