package io.watchfanout.testkit;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The base of a test against the JVM's etcd and Kafka ({@link EtcdExtension},
 * {@link KafkaExtension}): both servers, a client of that etcd, and the test's own topic and key
 * prefixes, fresh for every test method. A subclass's constructor takes the two servers
 * (resolved by the extensions) and hands them on.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
public abstract class EtcdKafkaTest {
    /** The JVM's etcd. */
    protected final EtcdServer etcdServer;
    /** The JVM's Kafka broker. */
    protected final KafkaBroker kafka;
    /** A client of {@link #etcdServer}, for this test method. */
    protected Client etcd;
    /** This test method's topic prefix. */
    protected String topicPrefix;
    /** This test method's etcd key prefix (ends with {@code /}). */
    protected String keyPrefix;

    protected EtcdKafkaTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    @BeforeEach
    void setUpEtcdKafka(Client client, TestPrefix prefix) {
        etcd = client;
        topicPrefix = prefix.topicPrefix();
        keyPrefix = prefix.keyPrefix();
    }
}
