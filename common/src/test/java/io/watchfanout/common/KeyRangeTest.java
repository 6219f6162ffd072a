package io.watchfanout.common;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.util.Comparator;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The key order the cache and the watcher index sort by, and the ranges of etcd requests. */
class KeyRangeTest {
    @Test
    void keyOrderIsEtcdsUnsignedByteOrderAsProtobufDefinesIt() {
        Comparator<ByteString> reference = ByteString.unsignedLexicographicalComparator();
        Random random = new Random(11);
        for (int i = 0; i < 20_000; i++) {
            ByteString a = randomKey(random);
            ByteString b = random.nextInt(4) == 0 ? a.concat(randomKey(random)) : randomKey(random);
            // Aliased slices (as parsed from a Kafka record) compare like copies.
            ByteString slice = ByteString.copyFrom(new byte[] {9}).concat(b).substring(1);
            assertThat(Integer.signum(KeyRange.KEY_ORDER.compare(a, slice)))
                    .as("%s vs %s", a, b)
                    .isEqualTo(Integer.signum(reference.compare(a, b)));
            assertThat(Integer.signum(KeyRange.KEY_ORDER.compare(slice, a)))
                    .isEqualTo(Integer.signum(reference.compare(b, a)));
        }
        assertThat(KeyRange.KEY_ORDER.compare(
                        ByteString.copyFrom(new byte[] {(byte) 0x80}), ByteString.copyFromUtf8("z")))
                .as("0x80 sorts after 'z' (unsigned)")
                .isPositive();
    }

    @Test
    void prefixRangeHoldsTheKeysWithThePrefixAndAsksEtcdForThem() {
        KeyRange pods = KeyRange.prefix(ByteString.copyFromUtf8("/pods/"));
        assertThat(pods.contains(ByteString.copyFromUtf8("/pods/a"))).isTrue();
        assertThat(pods.contains(ByteString.copyFromUtf8("/pods"))).isFalse();
        assertThat(pods.contains(ByteString.copyFromUtf8("/pods0"))).isFalse();
        assertThat(pods.requestKey()).isEqualTo(ByteString.copyFromUtf8("/pods/"));
        assertThat(pods.requestRangeEnd()).isEqualTo(ByteString.copyFromUtf8("/pods0"));
    }

    @Test
    void emptyPrefixIsEveryKeyFromEtcdsZeroKey() {
        KeyRange all = KeyRange.prefix(ByteString.EMPTY);
        ByteString zero = ByteString.copyFrom(new byte[] {0});
        assertThat(all).isEqualTo(KeyRange.all());
        assertThat(all.end()).isNull();
        assertThat(all.requestKey()).isEqualTo(zero);
        assertThat(all.requestRangeEnd()).isEqualTo(zero);
        assertThat(KeyRange.prefix(ByteString.copyFrom(new byte[] {(byte) 0xff}))
                        .requestRangeEnd())
                .isEqualTo(zero);
    }

    @Test
    void singleKeyAsksForTheKeyAlone() {
        KeyRange one = KeyRange.single(ByteString.copyFromUtf8("/a"));
        assertThat(one.requestRangeEnd()).isEmpty();
        assertThat(KeyRange.of(ByteString.copyFromUtf8("/a"), ByteString.EMPTY)).isEqualTo(one);
    }

    private static ByteString randomKey(Random r) {
        byte[] b = new byte[r.nextInt(5)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (r.nextBoolean() ? 'a' + r.nextInt(3) : r.nextInt(256));
        }
        return ByteString.copyFrom(b);
    }
}
