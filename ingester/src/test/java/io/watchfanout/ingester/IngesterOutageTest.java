package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.Client;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Outages show within seconds: a lost Kafka or etcd makes the ingester not ready (by its
 * probes, not the producer's delivery timeout), its lag metric tells the truth or NaN, and
 * on an idle etcd watched whole it publishes heartbeats. A private etcd, since the ingester
 * watches it whole; the shared broker, killed and restarted before the test ends.
 */
@ExtendWith(KafkaExtension.class)
@SuppressWarnings("try") // an ingester runs for the length of a try block
class IngesterOutageTest {
    private final KafkaBroker kafka;

    IngesterOutageTest(KafkaBroker kafka) {
        this.kafka = kafka;
    }

    @Test
    void lostDependenciesShowInReadinessAndMetricsAndAnIdleEtcdGetsHeartbeats(TestInfo info) throws Exception {
        String topicPrefix = TopicPrefixes.unique(info);
        try (EtcdServer etcdServer = new EtcdServer().start();
                Client etcd = Client.builder().endpoints(etcdServer.clientUrl()).build()) {
            // The whole keyspace: every revision is an event, so only heartbeats show an idle etcd.
            IngesterConfig config = Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, "");
            CollectorRegistry registry = new CollectorRegistry();
            try (Ingester ingester = new Ingester(config, registry)) {
                ingester.start();
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> ingester.notReadyReason().isEmpty());
                long written = new EtcdWorkload(etcd, "/outage/", 1, 5).run(5);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> metric(registry, "watchfanout_ingester_last_published_revision") == written);
                assertThat(registry.getSampleValue(
                                "watchfanout_event_latency_seconds_count",
                                new String[] {"stage"},
                                new String[] {"appended"}))
                        .isGreaterThanOrEqualTo(5.0);
                // Heartbeats come every --heartbeat-interval (1 s) while etcd is idle.
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> heartbeats(kafka, topicPrefix, written) >= 2);
                assertThat(heartbeats(kafka, topicPrefix, written))
                        .as("heartbeats on an idle etcd")
                        .isGreaterThanOrEqualTo(2);
                assertThat(metric(registry, "watchfanout_ingester_watch_lag_revisions"))
                        .isZero();

                kafka.kill();
                long killed = System.nanoTime();
                try {
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> ingester.notReadyReason().contains("cannot reach Kafka"));
                    System.out.printf(
                            "Kafka SIGKILL: ingester not ready after %.1f s%n", (System.nanoTime() - killed) / 1e9);
                    assertThat(metric(registry, "watchfanout_ingester_ready")).isZero();
                    HttpResponse<String> readyz = readyz(ingester);
                    assertThat(readyz.statusCode())
                            .as("/readyz while Kafka is lost")
                            .isEqualTo(503);
                    assertThat(readyz.body()).contains("cannot reach Kafka");
                    assertThat(registry.getSampleValue(
                                    "watchfanout_ingester_dependency_up",
                                    new String[] {"dependency"},
                                    new String[] {"kafka"}))
                            .isZero();
                    // etcd moves on while nothing reaches Kafka: the lag says so instead of 0.
                    long ahead = new EtcdWorkload(etcd, "/outage/", 2, 5).run(3);
                    await().atMost(Duration.ofSeconds(30))
                            .until(() ->
                                    metric(registry, "watchfanout_ingester_watch_lag_revisions") == ahead - written);
                } finally {
                    kafka.restart();
                }
                await().atMost(Duration.ofSeconds(120))
                        .until(() -> ingester.notReadyReason().isEmpty()
                                && metric(registry, "watchfanout_ingester_watch_lag_revisions") == 0);

                etcdServer.kill();
                try {
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> ingester.notReadyReason().contains("cannot reach etcd"));
                    assertThat(readyz(ingester).body())
                            .as("/readyz while etcd is lost")
                            .contains("cannot reach etcd");
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> Double.isNaN(metric(registry, "watchfanout_ingester_watch_lag_revisions")));
                    assertThat(metric(registry, "watchfanout_ingester_ready")).isZero();
                } finally {
                    etcdServer.restart();
                }
                await().atMost(Duration.ofSeconds(120))
                        .until(() -> ingester.notReadyReason().isEmpty());
            }
        }
    }

    /** Heartbeats at {@code revision} in the events topic: progress records that repeat it. */
    private static long heartbeats(KafkaBroker kafka, String topicPrefix, long revision) {
        List<ConsumerRecord<byte[], EventsRecord>> records =
                EventsTopicDump.read(kafka.bootstrapServers(), WatchFanoutSerdes.eventsTopic(topicPrefix));
        return records.stream()
                .filter(r -> r.value().hasProgress()
                        && r.value().getProgress().getRevision() == revision
                        && r.value().getProgress().getPrevRevision() == revision)
                .count();
    }

    private static double metric(CollectorRegistry registry, String name) {
        Double value = registry.getSampleValue(name);
        return value == null ? -1 : value;
    }

    private static HttpResponse<String> readyz(Ingester ingester) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ingester.httpPort() + "/readyz"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }
}
