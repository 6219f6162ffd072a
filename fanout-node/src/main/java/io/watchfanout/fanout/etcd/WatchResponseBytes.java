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
 * One {@code WatchResponse} as bytes, and grpc's stream over them: the watcher's own fields
 * (header, watch id, flags) followed by shared event frames of
 * {@link io.watchfanout.fanout.frame.Encoding#ETCD} or {@code ETCD_PREV_KV} (heap buffers, never
 * modified). The own fields are arrays that responses share too: the header field is encoded once
 * per revision ({@link EtcdHeaders#field}), the watch id field once per watch. grpc drains it into
 * its transport buffer: the shared bytes are copied from their arrays once, there and nowhere else.
 *
 * <p>A response is its own stream (one object per response, not two) and is read once. Streams
 * whose transport copies each response as it is sent (grpc's Netty transport drains it within
 * {@code onNext}) refill one object, their lane's, for all their responses ({@link #refill}); a
 * transport that hands the stream itself to its reader (grpc's in-process one) gets a new object
 * each time. Not thread-safe; grpc reads it on the thread that sends it. The arrays and frames are
 * never modified.
 */
final class WatchResponseBytes extends InputStream implements Drainable, KnownLength {
    /** The Watch method's response marshaller: writes the bytes; servers never parse responses. */
    static final MethodDescriptor.Marshaller<WatchResponseBytes> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(WatchResponseBytes value) {
            return value;
        }

        @Override
        public WatchResponseBytes parse(InputStream stream) {
            throw new UnsupportedOperationException("a server does not parse its own responses");
        }
    };

    private static final byte[] NONE = new byte[0];

    /** The own fields, in order: each a run of whole protobuf fields. */
    private byte[] first;

    private byte[] second;
    private byte[] third;
    private List<ByteBuffer> frames;
    private int length;

    /** -1, -2, -3: in {@code first}, {@code second}, {@code third}; else the index of the frame being read. */
    private int part = -3;

    private int offset;
    private int remaining;

    /**
     * @param first serialized {@code WatchResponse} fields of the watcher's own (may be empty)
     * @param second more of them, written after {@code first} (may be empty)
     * @param third more of them, written after {@code second} (may be empty)
     * @param frames shared frames to append (heap buffers), in order; not modified until the response
     *     is read
     */
    WatchResponseBytes(byte[] first, byte[] second, byte[] third, List<ByteBuffer> frames) {
        refill(first, second, third, frames);
    }

    /** A response of only its own fields (a serialized message). */
    WatchResponseBytes(byte[] own) {
        this(own, NONE, NONE, List.of());
    }

    /**
     * Makes this object the next response, as the constructor would, once the previous one has been
     * read.
     *
     * @return this
     * @throws IllegalArgumentException if the response would be over 2 GiB
     */
    WatchResponseBytes refill(byte[] first, byte[] second, byte[] third, List<ByteBuffer> frames) {
        long n = (long) first.length + second.length + third.length;
        for (int i = 0; i < frames.size(); i++) {
            n += frames.get(i).remaining();
        }
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a response of " + n + " bytes");
        }
        this.first = first;
        this.second = second;
        this.third = third;
        this.frames = frames;
        this.length = (int) n;
        this.remaining = length;
        this.part = -3;
        this.offset = 0;
        return this;
    }

    /** The serialized size in bytes. */
    int length() {
        return length;
    }

    private byte[] own(int p) {
        return p == -3 ? first : p == -2 ? second : third;
    }

    /** grpc's fast path: everything at once, from the arrays. */
    @Override
    public int drainTo(OutputStream target) throws IOException {
        int written = remaining;
        for (; part < 0; part++) {
            byte[] own = own(part);
            if (own.length > offset) {
                target.write(own, offset, own.length - offset);
            }
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

    /** Byte-wise reads, when grpc does not drain (compression, interceptors). */
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
                src = own(part);
                start = 0;
                size = src.length;
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
