package io.watchfanout.fanout.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.TimeUnit;
import org.xnio.channels.StreamSinkChannel;
import org.xnio.conduits.AbstractStreamSourceConduit;
import org.xnio.conduits.ConduitReadableByteChannel;
import org.xnio.conduits.Conduits;
import org.xnio.conduits.StreamSourceConduit;

/**
 * The read side of an accepted connection, below Undertow's HTTP parser: passes the bytes
 * through a {@link RequestTargetRewriter}, so that a request target Undertow would refuse
 * with a bare 400 reaches the API as a request it can answer with a JSON {@code Status}.
 * Installed on every connection before Undertow's open listener sees it (as Undertow's own
 * PROXY-protocol listener wraps a connection before handing it on).
 *
 * <p>Bytes are read into the caller's buffer, moved through the rewriter and put back; when
 * a rewrite made more bytes than fit, the rest waits here and a resumed read is woken up at
 * once, since the socket itself may have nothing new to read.
 *
 * <p>Not thread-safe: used by the connection's IO thread, as every conduit.
 */
final class RequestTargetGuard extends AbstractStreamSourceConduit<StreamSourceConduit> {
    private final RequestTargetRewriter rewriter = new RequestTargetRewriter();
    private final RequestTargetRewriter.Output out = new RequestTargetRewriter.Output();
    private boolean eof;

    RequestTargetGuard(StreamSourceConduit next) {
        super(next);
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        while (true) {
            if (out.remaining() > 0) {
                return out.drainTo(dst);
            }
            if (eof) {
                return -1;
            }
            if (rewriter.passthrough()) {
                return next.read(dst);
            }
            int start = dst.position();
            int n = next.read(dst);
            if (n == 0) {
                return 0;
            }
            if (n < 0) {
                eof = true;
                rewriter.finish(out);
                continue;
            }
            ByteBuffer fresh = dst.duplicate();
            fresh.flip();
            fresh.position(start);
            dst.position(start);
            rewriter.process(fresh, out);
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        long total = 0;
        for (int i = offset; i < offset + length; i++) {
            if (!dsts[i].hasRemaining()) {
                continue;
            }
            int n = read(dsts[i]);
            if (n < 0) {
                return total == 0 ? -1 : total;
            }
            total += n;
            if (dsts[i].hasRemaining()) {
                break;
            }
        }
        return total;
    }

    @Override
    public long transferTo(long position, long count, FileChannel target) throws IOException {
        return target.transferFrom(new ConduitReadableByteChannel(this), position, count);
    }

    @Override
    public long transferTo(long count, ByteBuffer throughBuffer, StreamSinkChannel target) throws IOException {
        return Conduits.transfer(this, count, throughBuffer, target);
    }

    @Override
    public void resumeReads() {
        next.resumeReads();
        if (out.remaining() > 0) {
            next.wakeupReads();
        }
    }

    @Override
    public void awaitReadable() throws IOException {
        if (out.remaining() == 0) {
            next.awaitReadable();
        }
    }

    @Override
    public void awaitReadable(long time, TimeUnit timeUnit) throws IOException {
        if (out.remaining() == 0) {
            next.awaitReadable(time, timeUnit);
        }
    }
}
