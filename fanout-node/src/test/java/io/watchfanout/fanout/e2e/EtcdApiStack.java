package io.watchfanout.fanout.e2e;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.TopicPrefixes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.TestInfo;

/**
 * What a test of the etcd API runs: the real ingester on a topic prefix of its own, a jetcd client
 * of etcd, and fan-out nodes with etcd's API (started when the test asks, so that it can write
 * before a node rebuilds), plus gRPC channels to etcd and to the nodes. Closes all of it.
 */
final class EtcdApiStack implements AutoCloseable {
    /** The test's topic prefix. */
    final String topicPrefix;
    /** The test's etcd keys: {@code "/<topic prefix>/"}. */
    final String keys;

    final JavaProcess ingester;
    /** A jetcd client of etcd itself. */
    final Client etcdClient;

    private final EtcdServer etcd;
    private final KafkaBroker kafka;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final Map<Stack.Node, Integer> apiPorts = new HashMap<>();

    private EtcdApiStack(
            TestInfo info, EtcdServer etcd, KafkaBroker kafka, BeforeIngester beforeIngester, String... ingesterFlags)
            throws Exception {
        this.etcd = etcd;
        this.kafka = kafka;
        this.topicPrefix = TopicPrefixes.unique(info);
        this.keys = "/" + topicPrefix + "/";
        this.etcdClient = Client.builder().endpoints(etcd.clientUrl()).build();
        opened.add(etcdClient);
        beforeIngester.run(this);
        this.ingester = Stack.ingester(etcd.clientUrl(), kafka.bootstrapServers(), topicPrefix, ingesterFlags);
        opened.add(ingester);
    }

    /** What a test does before the ingester starts, e.g. writes that its first snapshot must not swallow. */
    @FunctionalInterface
    interface BeforeIngester {
        void run(EtcdApiStack stack) throws Exception;
    }

    /** Starts the ingester and the client; nodes come with {@link #node}. */
    static EtcdApiStack start(TestInfo info, EtcdServer etcd, KafkaBroker kafka) throws Exception {
        return start(info, etcd, kafka, stack -> {});
    }

    /**
     * As {@link #start(TestInfo, EtcdServer, KafkaBroker)}, running {@code beforeIngester} first and
     * giving the ingester {@code ingesterFlags}.
     */
    static EtcdApiStack start(
            TestInfo info, EtcdServer etcd, KafkaBroker kafka, BeforeIngester beforeIngester, String... ingesterFlags)
            throws Exception {
        return new EtcdApiStack(info, etcd, kafka, beforeIngester, ingesterFlags);
    }

    /** A ready node with etcd's API on a free port, forwarding to etcd. */
    Stack.Node node(String name, String... extra) throws Exception {
        int port = FreePorts.pick();
        Stack.Node node = Stack.etcdApiNode(name, kafka.bootstrapServers(), topicPrefix, port, etcd.clientUrl(), extra);
        opened.add(node);
        apiPorts.put(node, port);
        return node;
    }

    /** The etcd API port of a node of this stack. */
    int apiPort(Stack.Node node) {
        return apiPorts.get(node);
    }

    /** {@code host:port} of a node's etcd API, as etcdctl takes it. */
    String endpoint(Stack.Node node) {
        return "127.0.0.1:" + apiPort(node);
    }

    /** A plaintext gRPC channel to a node's etcd API, closed with the stack. */
    ManagedChannel channel(Stack.Node node) {
        return channel(apiPort(node));
    }

    /** A plaintext gRPC channel to etcd itself, closed with the stack. */
    ManagedChannel etcdChannel() {
        return channel(etcd.clientPort());
    }

    private ManagedChannel channel(int port) {
        ManagedChannel ch = ManagedChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .build();
        opened.add(() -> ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return ch;
    }

    KV kv() {
        return etcdClient.getKVClient();
    }

    static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                if (first == null) {
                    first = new IllegalStateException("closing the test stack", e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
