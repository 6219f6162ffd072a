package io.watchfanout.fanout.watch;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ValueArenaTest {
    private static ByteString bytes(String s) {
        return ByteString.copyFrom(s, StandardCharsets.UTF_8);
    }

    @Test
    void storedValuesReadBackEqualAndShareAChunk() {
        ValueArena arena = new ValueArena(64);
        ByteString a = arena.copy(key("a"), bytes("first value"));
        ByteBuffer fetched = ByteBuffer.wrap("..second value..".getBytes(StandardCharsets.UTF_8), 2, 12);
        ByteString b = arena.copy(key("b"), fetched);
        assertThat(a).isEqualTo(bytes("first value"));
        assertThat(b).isEqualTo(bytes("second value"));
        assertThat(fetched.position()).as("the source is not consumed").isEqualTo(2);
        assertThat(arena.holds(a)).isTrue();
        assertThat(arena.holds(b)).isTrue();
        assertThat(arena.holds(bytes("first value")))
                .as("an equal value elsewhere")
                .isFalse();
        assertThat(arena.chunkCount()).isEqualTo(1);
        assertThat(arena.liveBytes()).isEqualTo(23);
        assertThat(arena.chunkBytesHeld()).isEqualTo(64);
    }

    @Test
    void emptyAndLargeValuesTakeNoChunk() {
        ValueArena arena = new ValueArena(64);
        assertThat(arena.copy(key("e"), ByteString.EMPTY)).isSameAs(ByteString.EMPTY);
        ByteString large = bytes("x".repeat(33));
        ByteString stored = arena.copy(key("l"), large);
        assertThat(stored).isEqualTo(large);
        assertThat(arena.holds(stored)).isFalse();
        assertThat(arena.chunkCount()).isZero();
        arena.release(stored);
        assertThat(arena.liveBytes()).isZero();
    }

    @Test
    void aFullChunkLessThanHalfLiveIsHandedOutOnceWithItsKeys() {
        ValueArena arena = new ValueArena(32);
        ByteString a = arena.copy(key("a"), bytes("0123456789"));
        ByteString b = arena.copy(key("b"), bytes("0123456789"));
        ByteString c = arena.copy(key("c"), bytes("0123456789"));
        arena.release(a);
        arena.release(b);
        assertThat(arena.nextSparse())
                .as("the chunk being filled is never handed out")
                .isNull();
        ByteString d = arena.copy(key("d"), bytes("0123456789"));
        assertThat(arena.chunkCount()).isEqualTo(2);
        ValueArena.Chunk sparse = arena.nextSparse();
        assertThat(sparse).isNotNull();
        assertThat(sparse.keys()).containsExactly(key("a"), key("b"), key("c"));
        assertThat(arena.isIn(sparse, c)).isTrue();
        assertThat(arena.isIn(sparse, d)).isFalse();
        assertThat(arena.nextSparse()).isNull();
        ByteString moved = arena.copy(key("c"), c);
        arena.drop(sparse);
        assertThat(arena.chunkCount()).isEqualTo(1);
        assertThat(arena.liveBytes()).isEqualTo(20);
        assertThat(arena.holds(c)).as("a dropped chunk is forgotten").isFalse();
        assertThat(c).as("but its views stay readable").isEqualTo(bytes("0123456789"));
        assertThat(moved).isEqualTo(c);
    }

    @Test
    void defaultChunksFillWholeRegions() {
        int chunk = ValueArena.defaultChunkBytes();
        assertThat(chunk).isGreaterThanOrEqualTo(ValueArena.MIN_CHUNK_BYTES - 16);
        assertThat((chunk + 16L) % (1 << 20))
                .as("whole 1 MiB multiples (G1 regions are powers of two)")
                .isZero();
    }
}
