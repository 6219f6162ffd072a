package io.watchfanout.ingester.support;

import com.google.protobuf.ByteString;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.EtcdSecurity;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.ingester.Ingester;
import io.watchfanout.ingester.IngesterConfig;
import io.watchfanout.ingester.publish.DigestSchedule;
import io.watchfanout.testkit.JavaProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Starts ingesters for tests: in this JVM, or as a real child process that can be killed. */
public final class Ingesters {
    private Ingesters() {}

    /**
     * A configuration with test-sized defaults; the history of an empty topic starts at most 1,000
     * revisions back, since the shared etcd's history is other tests' writes.
     */
    public static IngesterConfig config(String etcdUrl, String bootstrap, String topicPrefix, String keyPrefix) {
        return config(etcdUrl, bootstrap, topicPrefix, keyPrefix, 1000);
    }

    /** As {@link #config(String, String, String, String)}, with {@code --initial-history-revisions}. */
    public static IngesterConfig config(
            String etcdUrl, String bootstrap, String topicPrefix, String keyPrefix, int initialHistoryRevisions) {
        return new IngesterConfig(
                new IngesterConfig.Etcd(
                        List.of(etcdUrl), ByteString.copyFromUtf8(keyPrefix), EtcdSecurity.NONE, 512 << 20, 64L << 20),
                new IngesterConfig.Kafka(bootstrap, KafkaClientSettings.NONE, topicPrefix, 8 << 20, "lz4"),
                new IngesterConfig.Topics(Duration.ofDays(1), 1, (short) -1, -1),
                new IngesterConfig.History(initialHistoryRevisions, 1000),
                new IngesterConfig.Commit(
                        topicPrefix + ".ingester", Duration.ofSeconds(20), 5000, Duration.ofSeconds(1)),
                new IngesterConfig.Roles(
                        true,
                        true,
                        false,
                        "/watchfanout/elections/" + topicPrefix + "/ingester",
                        Duration.ofSeconds(10)),
                new IngesterConfig.Recovery(Duration.ofSeconds(1), Duration.ofSeconds(3)),
                new IngesterConfig.Operations("127.0.0.1", 0, null),
                DigestSchedule.Settings.OFF);
    }

    /** Starts an ingester in this JVM with its own metrics registry. */
    public static Ingester inProcess(IngesterConfig config) {
        Ingester ingester = new Ingester(config, new CollectorRegistry());
        ingester.start();
        return ingester;
    }

    /** Starts {@code IngesterMain} as a child JVM with the given flags (besides the required ones). */
    public static JavaProcess process(
            String name, String etcdUrl, String bootstrap, String topicPrefix, String keyPrefix, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--etcd-endpoints",
                etcdUrl,
                "--kafka-bootstrap",
                bootstrap,
                "--topic-prefix",
                topicPrefix,
                "--key-prefix",
                keyPrefix,
                "--http-port",
                "0",
                "--http-host",
                "127.0.0.1",
                "--transaction-timeout",
                "10s",
                "--retry-backoff-max",
                "1s"));
        args.addAll(List.of(extra));
        // The production logging configuration (not logback-test.xml, first on the test class path):
        // the child's log is what an operator would see, filters and levels included.
        // The client compiler alone and a serial collector: the tests start about twenty of these
        // JVMs on a 2-core machine, and most live for seconds; C2's and G1's threads would compete
        // with the ingester's own work (and with etcd's and Kafka's) for the cores.
        return JavaProcess.builder("io.watchfanout.ingester.IngesterMain")
                .name(name)
                .maxHeap("256m")
                .args(args)
                .jvmArg("-XX:TieredStopAtLevel=1")
                .jvmArg("-XX:+UseSerialGC")
                .systemProperty("logback.configurationFile", "logback.xml")
                .start();
    }
}
