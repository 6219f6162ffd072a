package io.watchfanout.fanout.etcd;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * One {@code WatchResponse} as bytes: the watcher's own fields (header, watch id, flags), built
 * per response, followed by shared event frames of {@link io.watchfanout.fanout.frame.Encoding#ETCD}
 * or {@code ETCD_PREV_KV} (heap buffers, never modified). grpc drains it into its transport buffer:
 * the shared frames are copied from their arrays once, there and nowhere else.
 *
 * <p>Immutable; the frames are read through duplicates.
 */
final class WatchResponseBytes {
    /** The Watch method's response marshaller: writes the bytes; servers never parse responses. */
    static final MethodDescriptor.Marshaller<WatchResponseBytes> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(WatchResponseBytes value) {
            return value.new Stream();
        }

        @Override
        public WatchResponseBytes parse(InputStream stream) {
            throw new UnsupportedOperationException("a server does not parse its own responses");
        }
    };

    private final byte[] own;
    private final List<ByteBuffer> frames;
    private final int length;

    /**
     * @param own a serialized {@code WatchResponse} holding the watcher's own fields
     * @param frames shared frames to append (heap buffers), in order
     */
    WatchResponseBytes(byte[] own, List<ByteBuffer> frames) {
        this.own = own;
        this.frames = frames;
        long n = own.length;
        for (ByteBuffer f : frames) {
            n += f.remaining();
        }
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a response of " + n + " bytes");
        }
        this.length = (int) n;
    }

    /** A response of only its own fields. */
    WatchResponseBytes(byte[] own) {
        this(own, List.of());
    }

    /** The serialized size in bytes. */
    int length() {
        return length;
    }

    /** grpc's view: drained when grpc can, read byte-wise otherwise (compression, interceptors). */
    private final class Stream extends InputStream implements Drainable, KnownLength {
        /** -1: in {@code own}; else the index of the frame being read. */
        private int part = -1;

        private int offset;
        private int remaining = length;

        @Override
        public int drainTo(OutputStream target) throws IOException {
            int written = remaining;
            if (part < 0) {
                target.write(own, offset, own.length - offset);
                part = 0;
                offset = 0;
            }
            for (; part < frames.size(); part++) {
                ByteBuffer f = frames.get(part);
                target.write(f.array(), f.arrayOffset() + f.position() + offset, f.remaining() - offset);
                offset = 0;
            }
            remaining = 0;
            return written;
        }

        @Override
        public int available() {
            return remaining;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (remaining == 0) {
                return -1;
            }
            int done = 0;
            while (done < len && remaining > 0) {
                byte[] src;
                int start;
                int size;
                if (part < 0) {
                    src = own;
                    start = 0;
                    size = own.length;
                } else {
                    ByteBuffer f = frames.get(part);
                    src = f.array();
                    start = f.arrayOffset() + f.position();
                    size = f.remaining();
                }
                int n = Math.min(len - done, size - offset);
                System.arraycopy(src, start + offset, b, off + done, n);
                done += n;
                offset += n;
                remaining -= n;
                if (offset == size) {
                    part++;
                    offset = 0;
                }
            }
            return done;
        }
    }
}
