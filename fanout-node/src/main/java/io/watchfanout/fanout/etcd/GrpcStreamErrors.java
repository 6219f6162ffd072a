package io.watchfanout.fanout.etcd;

import io.grpc.Status;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log line, without a stack trace, for a gRPC message the port could not read as a frame: a
 * message larger than the API takes ({@code RESOURCE_EXHAUSTED}), a stream that ends inside a
 * message, a compressed message without a compression. grpc-java answers the client with the
 * status itself, then logs the failure as a WARNING with the exception's stack trace (its Netty
 * server stream's "Exception processing message"); etcd logs nothing for the same input. The
 * client's fault is worth a line, not a trace.
 *
 * <p>Installed once per JVM as a {@code java.util.logging} filter on that logger (grpc-java logs
 * through it). Thread-safe.
 */
final class GrpcStreamErrors implements Filter {
    private static final org.slf4j.Logger LOG = LoggerFactory.getLogger(GrpcStreamErrors.class);
    /** grpc-java's logger of a server stream's frame errors: held, so that the filter stays on it. */
    private static final Logger STREAM_LOG = Logger.getLogger("io.grpc.netty.NettyServerStream");

    private GrpcStreamErrors() {}

    /** Puts the filter on grpc-java's logger (idempotent). */
    static synchronized void install() {
        if (!(STREAM_LOG.getFilter() instanceof GrpcStreamErrors)) {
            STREAM_LOG.setFilter(new GrpcStreamErrors());
        }
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        if (record.getThrown() == null) {
            return true;
        }
        Status status = Status.fromThrowable(record.getThrown());
        LOG.info(
                "a gRPC client sent a message the etcd API cannot read; answered {}{}",
                status.getCode(),
                status.getDescription() == null ? "" : ": " + status.getDescription());
        return false;
    }
}
