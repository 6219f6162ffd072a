package io.watchfanout.ingester.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.watchfanout.common.KeyRange;
import io.watchfanout.schema.StateDigestBuilder;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdWorkload;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link EtcdDigestReader} against a real etcd: a digest at a past revision, read a page at a time. */
@ExtendWith(EtcdExtension.class)
class EtcdDigestReaderTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static long put(Client etcd, String key, String value) throws Exception {
        return etcd.getKVClient()
                .put(EtcdWorkload.bytes(key), EtcdWorkload.bytes(value))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }

    @Test
    void theDigestAtAPastRevisionEqualsOneBuiltFromTheSnapshotAtIt(Client etcd) throws Exception {
        String prefix = "/digest-" + System.nanoTime() + "/";
        for (int i = 0; i < 25; i++) {
            put(etcd, prefix + String.format("k%02d", i), "v" + i);
        }
        long revision = put(etcd, prefix + "k03", "again");
        // Later writes do not change what the digest at the revision says.
        put(etcd, prefix + "k04", "later");
        put(etcd, prefix + "k99", "later");
        KeyRange range = KeyRange.prefix(ByteString.copyFromUtf8(prefix));

        EtcdDigestReader reader = new EtcdDigestReader(etcd, 7, 10, Duration.ofMillis(1), TIMEOUT);
        StateDigest digest = reader.read(range, revision);

        EtcdSnapshot snapshot = new EtcdSnapshotReader(etcd, 1000, TIMEOUT).read(range, revision);
        StateDigestBuilder expected = new StateDigestBuilder(revision, 10);
        snapshot.kvs().forEach(expected::add);
        assertThat(digest).isEqualTo(expected.build());
        assertThat(digest.getKeyCount()).isEqualTo(25);
        assertThat(digest.getRangesList()).extracting(r -> r.getKeyCount()).containsExactly(10L, 10L, 5L);
        assertThat(digest.getRanges(1).getStart().toStringUtf8()).isEqualTo(prefix + "k10");
        assertThat(snapshot.kvs().stream().map(KeyValue::getVersion)).contains(2L);
        assertThat(reader.pagesRead()).isEqualTo(4); // 25 keys, 7 a page
        assertThat(reader.keysRead()).isEqualTo(25);
    }

    @Test
    void anEmptyRangeHasAnEmptyDigestAndARevisionEtcdHasNotReachedFails(Client etcd) throws Exception {
        String prefix = "/digest-empty-" + System.nanoTime() + "/";
        long revision = put(etcd, "/digest-elsewhere", "x");
        EtcdDigestReader reader = new EtcdDigestReader(etcd, 100, 10, Duration.ZERO, TIMEOUT);
        StateDigest digest = reader.read(KeyRange.prefix(ByteString.copyFromUtf8(prefix)), revision);
        assertThat(digest.getKeyCount()).isZero();
        assertThat(digest.getHash()).isZero();
        assertThat(digest.getRevision()).isEqualTo(revision);

        assertThatThrownBy(() -> reader.read(KeyRange.prefix(ByteString.copyFromUtf8(prefix)), revision + 1_000_000))
                .isInstanceOf(ExecutionException.class)
                .hasMessageContaining("future revision");
    }
}
