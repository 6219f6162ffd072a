package io.watchfanout.fanout.e2e;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.testkit.Closer;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TestPrefix;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What end-to-end tests of a stack share: the JVM's etcd and Kafka, a client of that etcd, the
 * test's own topic and key prefixes, and a {@link Closer} for the processes it starts (closed
 * after each test, in reverse order).
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
abstract class StackTest {
    final EtcdServer etcdServer;
    final KafkaBroker kafka;
    final Closer closer = new Closer();
    Client etcd;
    String topicPrefix;
    String keyPrefix;

    StackTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    @BeforeEach
    void setUpStack(Client client, TestPrefix prefix) {
        etcd = client;
        topicPrefix = prefix.topicPrefix();
        keyPrefix = prefix.keyPrefix();
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
