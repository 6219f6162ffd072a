package io.watchfanout.fanout.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.NettyServerBuilder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TransportClockTest {
    @Test
    void grpcTakesTheClockThatReadsTheSystemClockWithoutReflection() {
        // A grpc upgrade that drops the package-private setter would silently bring back its
        // allocating clock: this says so.
        assertThat(TransportClock.installOn(NettyServerBuilder.forPort(0))).isTrue();
    }

    @Test
    void itsNanosAreTheWallClocksMilliseconds() throws Exception {
        TransportClock clock = clock();
        long before = TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis());
        long now = clock.currentTimeNanos();
        long after = TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis());
        assertThat(now).isBetween(before, after);
        assertThat(now % 1_000_000L).isZero();
    }

    private static TransportClock clock() throws Exception {
        var constructor = TransportClock.class.getDeclaredConstructor();
        constructor.setAccessible(true);
        return constructor.newInstance();
    }
}
