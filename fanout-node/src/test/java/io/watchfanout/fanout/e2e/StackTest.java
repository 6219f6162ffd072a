package io.watchfanout.fanout.e2e;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.testkit.Closer;
import io.watchfanout.testkit.EtcdKafkaTest;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;

/**
 * What end-to-end tests of a stack share beyond {@link EtcdKafkaTest}: a {@link Closer} for the
 * processes a test starts (closed after it, in reverse order), and etcd's key-values at a
 * revision.
 */
abstract class StackTest extends EtcdKafkaTest {
    final Closer closer = new Closer();

    StackTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    @AfterEach
    void tearDownStack() throws Exception {
        closer.close();
    }

    /** etcd's key-values under the test's key prefix at {@code revision}, as {@code etcdctl get --prefix --rev}. */
    List<KeyValue> etcdAt(long revision) throws Exception {
        List<KeyValue> out = new ArrayList<>();
        for (io.etcd.jetcd.KeyValue kv : etcd.getKVClient()
                .get(
                        EtcdWorkload.bytes(keyPrefix),
                        GetOption.builder()
                                .isPrefix(true)
                                .withRevision(revision)
                                .build())
                .get(30, TimeUnit.SECONDS)
                .getKvs()) {
            out.add(Expected.kv(kv));
        }
        out.sort((x, y) -> ByteString.unsignedLexicographicalComparator().compare(x.getKey(), y.getKey()));
        return out;
    }
}
