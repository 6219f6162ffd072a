package io.watchfanout.fanout.kube;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.watchfanout.fanout.e2e.Stack;
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
 * What the Kubernetes API's end-to-end tests share: the JVM's etcd and Kafka, a topic prefix and
 * kube-apiserver's {@code /registry} inside the test's own key prefix, an ingester and nodes as
 * child processes, and writes of stored objects under their keys.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
abstract class KubeStackTest {
    final EtcdServer etcdServer;
    final KafkaBroker kafka;
    final Closer closer = new Closer();
    Client etcd;
    String topicPrefix;
    /** The node's --kube-prefix: kube-apiserver's /registry inside the test's own key prefix. */
    String registry;

    KubeStackTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    @BeforeEach
    void setUpStack(Client client, TestPrefix prefix) {
        etcd = client;
        topicPrefix = prefix.topicPrefix();
        registry = prefix.keyPrefix() + "registry";
    }

    @AfterEach
    void tearDownStack() throws Exception {
        closer.close();
    }

    /** An ingester and node {@code nodeId} serving {@link #registry}, with consistent reads from etcd. */
    Stack.Node start(String nodeId, String... extra) {
        closer.keep(Stack.ingester(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix));
        return node(nodeId, extra);
    }

    /** One more node {@code nodeId} of the same topics (after {@link #start}), ready. */
    Stack.Node node(String nodeId, String... extra) {
        List<String> flags =
                new ArrayList<>(List.of("--kube-prefix", registry, "--etcd-endpoints", etcdServer.clientUrl()));
        flags.addAll(List.of(extra));
        return closer.keep(Stack.node(nodeId, kafka.bootstrapServers(), topicPrefix, flags.toArray(String[]::new)));
    }

    /** Writes {@code value} at {@code <registry>/<path>}; returns the revision of the write. */
    long put(String path, byte[] value) throws Exception {
        return etcd.getKVClient()
                .put(EtcdWorkload.bytes(registry + "/" + path), ByteSequence.from(value))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }

    /** Deletes {@code <registry>/<path>}; returns the revision of the delete. */
    long delete(String path) throws Exception {
        return etcd.getKVClient()
                .delete(EtcdWorkload.bytes(registry + "/" + path))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }
}
