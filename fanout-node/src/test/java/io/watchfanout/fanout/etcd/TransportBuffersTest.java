package io.watchfanout.fanout.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.internal.WritableBuffer;
import io.grpc.internal.WritableBufferAllocator;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The etcd API's transport buffers as grpc-netty's own allocator asks the pool for them. */
class TransportBuffersTest {
    private final List<WritableBuffer> taken = new ArrayList<>();

    @AfterEach
    void release() {
        taken.forEach(WritableBuffer::release);
        TransportBuffers.expect(0);
    }

    @Test
    void grpcAsksForItsSmallestBufferForASmallMessage() throws Exception {
        // A grpc upgrade that changes how it sizes a message's buffer would leave every response
        // in a buffer grpc chose: this says so.
        assertThat(writable(TransportBuffers.GRPC_MESSAGE_HEADER + 200)).isEqualTo(TransportBuffers.GRPC_SMALLEST);
    }

    @Test
    void anExpectedMessageGetsABufferOfItsSizeOnce() throws Exception {
        TransportBuffers.expect(200);
        assertThat(writable(TransportBuffers.GRPC_MESSAGE_HEADER + 200))
                .isEqualTo(TransportBuffers.GRPC_MESSAGE_HEADER + 200);
        // The next buffer the thread asks for (another message, grpc's header) is grpc's own again.
        assertThat(writable(100)).isEqualTo(TransportBuffers.GRPC_SMALLEST);
    }

    @Test
    void aMessageLargerThanGrpcsSmallestBufferGetsWhatGrpcAsks() throws Exception {
        TransportBuffers.expect(5000);
        assertThat(writable(TransportBuffers.GRPC_MESSAGE_HEADER + 5000))
                .isEqualTo(TransportBuffers.GRPC_MESSAGE_HEADER + 5000);
    }

    @Test
    void anExpectationIsTheCallingThreadsOnly() throws Exception {
        TransportBuffers.expect(200);
        int elsewhere = CompletableFuture.supplyAsync(() -> {
                    try {
                        return writable(TransportBuffers.GRPC_MESSAGE_HEADER + 200);
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .get();
        assertThat(elsewhere).isEqualTo(TransportBuffers.GRPC_SMALLEST);
        TransportBuffers.expect(0);
        assertThat(writable(TransportBuffers.GRPC_MESSAGE_HEADER + 200)).isEqualTo(TransportBuffers.GRPC_SMALLEST);
    }

    /** The writable bytes of the buffer grpc-netty's allocator takes from the pool for a message. */
    private synchronized int writable(int messageWithHeader) throws ReflectiveOperationException {
        var type = Class.forName("io.grpc.netty.NettyWritableBufferAllocator");
        var constructor = type.getDeclaredConstructor(ByteBufAllocator.class);
        constructor.setAccessible(true);
        WritableBufferAllocator grpc = (WritableBufferAllocator) constructor.newInstance(TransportBuffers.POOL);
        WritableBuffer buffer = grpc.allocate(messageWithHeader);
        taken.add(buffer);
        return buffer.writableBytes();
    }
}
