package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.Client;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TestPrefix;
import io.watchfanout.testkit.TopicPrefixes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/** The ingester as operators see it: /readyz, /metrics, refusing bad topics, SIGTERM. */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class IngesterOperationsTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private final EtcdServer etcdServer;
    private final KafkaBroker kafka;

    IngesterOperationsTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    private static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void readinessAndMetricsFollowThePublisher(Client etcd, TestPrefix names) throws Exception {
        String prefix = names.topicPrefix();
        try (Ingester ingester = Ingesters.inProcess(
                Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, "/" + prefix + "/"))) {
            String base = "http://127.0.0.1:" + ingester.httpPort();
            assertThat(get(base + "/livez").statusCode()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> get(base + "/readyz").statusCode() == 200);
            long revision = new EtcdWorkload(etcd, "/" + prefix + "/", 1, 10).run(30);
            new EtcdWorkload(etcd, "/elsewhere/", 1, 10).run(3);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> metric(base, "watchfanout_ingester_last_published_revision") >= revision + 3);
            String metrics = get(base + "/metrics").body();
            assertThat(metrics)
                    .contains(
                            "watchfanout_ingester_events_published_total",
                            "watchfanout_ingester_progress_records_total",
                            "watchfanout_ingester_transactions_total{outcome=\"commit\",}",
                            "watchfanout_ingester_watch_lag_revisions",
                            "watchfanout_ingester_watch_restarts_total",
                            "watchfanout_ingester_resyncs_total{reason=\"initial\",}");
            assertThat(metric(base, "watchfanout_ingester_events_published_total"))
                    .isGreaterThanOrEqualTo(30);
            assertThat(metric(base, "watchfanout_ingester_progress_records_total"))
                    .isGreaterThanOrEqualTo(1);
        }
    }

    private static double metric(String base, String name) throws Exception {
        for (String line : get(base + "/metrics").body().split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1));
            }
        }
        return -1;
    }

    @Test
    void refusesToStartOnAnEventsTopicWithSeveralPartitions(TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(
                            new NewTopic(WatchFanoutSerdes.eventsTopic(prefix), Optional.of(3), Optional.empty())
                                    .configs(Map.of())))
                    .all()
                    .get();
        }
        try (JavaProcess ingester = Ingesters.process(
                "ingester", etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, "/" + prefix + "/")) {
            assertThat(ingester.waitForExit(Duration.ofSeconds(60))).hasValue(1);
            assertThat(Files.readString(ingester.logFile()))
                    .contains("refusing to start: topic " + WatchFanoutSerdes.eventsTopic(prefix)
                            + " has 3 partitions (expected: 1");
        }
    }

    @Test
    void refusesToStartOnTopicsWithLessReplicationThanAsked(TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(
                            new NewTopic(WatchFanoutSerdes.eventsTopic(prefix), Optional.of(1), Optional.empty()),
                            new NewTopic(WatchFanoutSerdes.stateTopic(prefix), Optional.of(1), Optional.empty())
                                    .configs(Map.of("cleanup.policy", "compact"))))
                    .all()
                    .get();
        }
        // One broker: the topics have one replica, and the ingester asks for three.
        try (JavaProcess ingester = Ingesters.process(
                "ingester",
                etcdServer.clientUrl(),
                kafka.bootstrapServers(),
                prefix,
                "/" + prefix + "/",
                "--replication-factor",
                "3",
                "--min-insync-replicas",
                "2")) {
            assertThat(ingester.waitForExit(Duration.ofSeconds(60))).hasValue(1);
            assertThat(Files.readString(ingester.logFile()))
                    .contains("refusing to start: topic " + WatchFanoutSerdes.eventsTopic(prefix)
                            + " has replication factor 1 (expected: >= 3, --replication-factor)");
        }
    }

    @Test
    void anEventLargerThanARecordStopsTheIngesterWithAClearError(Client etcd, TestPrefix names) throws Exception {
        String prefix = names.topicPrefix();
        try (JavaProcess ingester = Ingesters.process(
                "ingester",
                etcdServer.clientUrl(),
                kafka.bootstrapServers(),
                prefix,
                "/" + prefix + "/",
                "--max-record-bytes",
                "64KiB")) {
            ingester.awaitLog("watching etcd from revision", Duration.ofSeconds(60));
            long revision = etcd.getKVClient()
                    .put(EtcdWorkload.bytes("/" + prefix + "/big"), io.etcd.jetcd.ByteSequence.from(new byte[100_000]))
                    .get()
                    .getHeader()
                    .getRevision();
            assertThat(ingester.waitForExit(Duration.ofSeconds(60))).hasValue(1);
            assertThat(Files.readString(ingester.logFile()))
                    .contains("an etcd event does not fit a Kafka record: the event of key /" + prefix
                            + "/big at revision " + revision)
                    .contains("raise --max-record-bytes");
            // Nothing after the oversize event was published in its place: the topic ends before it.
            var records = io.watchfanout.ingester.support.EventsTopicDump.read(
                    kafka.bootstrapServers(), WatchFanoutSerdes.eventsTopic(prefix));
            assertThat(io.watchfanout.schema.EventsRecords.revision(
                            records.get(records.size() - 1).value()))
                    .isLessThan(revision);
        }
    }

    @Test
    void waitsForKafkaAndSaysSo(TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        int unusedPort = io.watchfanout.testkit.FreePorts.pick();
        try (JavaProcess ingester = Ingesters.process(
                "ingester", etcdServer.clientUrl(), "127.0.0.1:" + unusedPort, prefix, "/" + prefix + "/")) {
            String line = ingester.awaitLog("waiting for Kafka at 127.0.0.1:" + unusedPort, Duration.ofSeconds(90));
            assertThat(line).contains("retrying in");
            assertThat(ingester.isAlive()).isTrue();
        }
    }

    @Test
    void sigtermStopsCleanlyAndARestartResumesWithoutDuplicates(TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        try (Client etcd = Client.builder().endpoints(etcdServer.clientUrl()).build()) {
            EtcdWorkload workload = new EtcdWorkload(etcd, "/" + prefix + "/", 2, 30);
            try (JavaProcess first = Ingesters.process(
                    "ingester-1", etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, "/" + prefix + "/")) {
                first.awaitLog("watching etcd from revision", Duration.ofSeconds(60));
                workload.run(100);
                // 143 = 128 + SIGTERM: the JVM's exit status after its shutdown hooks ran.
                assertThat(first.stop(Duration.ofSeconds(30))).isEqualTo(143);
                assertThat(Files.readString(first.logFile())).contains("stopping (signal received)");
                // A clean first start (topics created by this ingester), 100 writes and a stop: nothing
                // in it is a problem, so nothing may look like one.
                assertThat(warningsAndErrors(first))
                        .as("WARN/ERROR lines of a clean first start")
                        .isEmpty();
            }
            workload.run(100);
            try (JavaProcess second = Ingesters.process(
                    "ingester-2", etcdServer.clientUrl(), kafka.bootstrapServers(), prefix, "/" + prefix + "/")) {
                second.awaitLog("resuming after the last revision", Duration.ofSeconds(60));
                long until = EtcdWorkload.currentRevision(etcd);
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    var records = io.watchfanout.ingester.support.EventsTopicDump.read(
                            kafka.bootstrapServers(), WatchFanoutSerdes.eventsTopic(prefix));
                    return io.watchfanout.schema.EventsRecords.revision(
                                    records.get(records.size() - 1).value())
                            >= until;
                });
                io.watchfanout.ingester.support.Exactness.assertTopicEqualsEtcd(
                        io.watchfanout.ingester.support.EventsTopicDump.read(
                                kafka.bootstrapServers(), WatchFanoutSerdes.eventsTopic(prefix)),
                        etcd,
                        com.google.protobuf.ByteString.copyFromUtf8("/" + prefix + "/"),
                        until);
                assertThat(warningsAndErrors(second))
                        .as("WARN/ERROR lines of a clean restart")
                        .isEmpty();
            }
        }
    }

    /** The WARN and ERROR lines of a child ingester's log (its logback pattern starts with the time and level). */
    private static java.util.List<String> warningsAndErrors(JavaProcess ingester) throws java.io.IOException {
        return Files.readAllLines(ingester.logFile()).stream()
                .filter(line -> line.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} (WARN|ERROR) .*"))
                .toList();
    }
}
