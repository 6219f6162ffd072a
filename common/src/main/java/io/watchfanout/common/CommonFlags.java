package io.watchfanout.common;

import java.util.List;

/**
 * The flags that several runnables take, with the same name, form, unit and check everywhere;
 * each runnable adds its own help text ({@link Flag.Builder#help}).
 *
 * <p>Stateless and thread-safe.
 */
public final class CommonFlags {
    private CommonFlags() {}

    /** {@code --kafka-bootstrap HOSTS}: {@code host:port[,host:port]}, checked when parsed ({@link KafkaBootstrapConverter}). */
    public static Flag.Builder<String> kafkaBootstrap() {
        return Flag.of("--kafka-bootstrap", "HOSTS", String.class, new KafkaBootstrapConverter())
                .unit("`host:port`, comma-separated");
    }

    /** {@code --topic-prefix NAME}: the topics are {@code <NAME>.events} and {@code <NAME>.state}. */
    public static Flag.Builder<String> topicPrefix() {
        return Flag.text("--topic-prefix", "NAME")
                .unit("Kafka topic name prefix")
                .check(Check.notBlank("not empty"));
    }

    /** {@code --etcd-endpoints URLS}: etcd client URLs as etcdctl takes them ({@link EtcdEndpointConverter}). */
    public static Flag.Builder<List<String>> etcdEndpoints() {
        return Flag.list("--etcd-endpoints", "URLS", new EtcdEndpointConverter())
                .unit("URLs or `host:port`, comma-separated");
    }
}
