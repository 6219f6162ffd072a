package io.watchfanout.fanout.etcd;

import io.grpc.internal.TimeProvider;
import io.grpc.internal.TransportTracer;
import io.grpc.netty.NettyServerBuilder;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clock of grpc's transport statistics (channelz's time of a connection's last message): the
 * system clock in milliseconds, read without allocating. grpc-java 1.70's own clock reads
 * {@code Instant.now()} through reflection, an {@code Instant}, a {@code Long}, an
 * {@code Integer} and argument arrays for every message a connection sends: 12 % of the bytes the
 * etcd API's event loops allocated per Watch response (docs/BENCHMARKS.md, "The etcd API's memory").
 * The statistics keep their meaning; only the resolution of their timestamps drops to a
 * millisecond.
 *
 * <p>{@code NettyServerBuilder} takes a tracer factory only through a package-private method, so it
 * is set by reflection, once per server; a grpc without that method keeps its own clock (a debug
 * line says so) and serves the same. Thread-safe: the clock has no state.
 */
final class TransportClock implements TimeProvider {
    private static final Logger LOG = LoggerFactory.getLogger(TransportClock.class);
    private static final long NANOS_PER_MILLI = 1_000_000L;

    private TransportClock() {}

    @Override
    public long currentTimeNanos() {
        return System.currentTimeMillis() * NANOS_PER_MILLI;
    }

    /**
     * Gives the server's transports this clock.
     *
     * @return whether grpc took it (false: this grpc has no such setter; its own clock stays)
     */
    static boolean installOn(NettyServerBuilder builder) {
        try {
            Method set = NettyServerBuilder.class.getDeclaredMethod(
                    "setTransportTracerFactory", TransportTracer.Factory.class);
            set.setAccessible(true);
            set.invoke(builder, new TransportTracer.Factory(new TransportClock()));
            return true;
        } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException | RuntimeException e) {
            LOG.debug("grpc's transport tracer keeps its own clock: {}", e.toString());
            return false;
        }
    }
}
