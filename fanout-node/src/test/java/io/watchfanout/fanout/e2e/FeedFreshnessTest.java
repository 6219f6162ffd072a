package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node tells an idle etcd from a dead feed: the ingester's heartbeats keep it ready while
 * nothing is written; a stopped ingester or a lost Kafka makes /readyz fail, and metrics say
 * "unknown" (NaN) rather than 0 where they cannot know.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class FeedFreshnessTest {
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    FeedFreshnessTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void aStoppedIngesterOrALostKafkaFailsReadinessAndHeartbeatsKeepAnIdleFeedFresh(TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        try (JavaProcess ingester = Stack.ingester(etcd.clientUrl(), kafka.bootstrapServers(), prefix);
                Stack.Node node =
                        Stack.node("fresh-1", kafka.bootstrapServers(), prefix, "--max-feed-staleness", "3s")) {
            // An event's way through the tier is timed: applied by the node, written to a watcher.
            String key = "/" + prefix + "/latency";
            java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>> watch =
                    java.net.http.HttpClient.newHttpClient()
                            .sendAsync(
                                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                                    node.url() + "/v1/watch?key=" + key + "&timeoutSeconds=5"))
                                            .build(),
                                    java.net.http.HttpResponse.BodyHandlers.ofString());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Stack.metrics(node).getOrDefault("watchfanout_watchers_live", 0.0) >= 1);
            try (io.etcd.jetcd.Client client =
                    io.etcd.jetcd.Client.builder().endpoints(etcd.clientUrl()).build()) {
                client.getKVClient()
                        .put(
                                io.etcd.jetcd.ByteSequence.from(key, java.nio.charset.StandardCharsets.UTF_8),
                                io.etcd.jetcd.ByteSequence.from("v", java.nio.charset.StandardCharsets.UTF_8))
                        .get();
            }
            assertThat(watch.get().body()).contains("\"ADDED\"");
            Map<String, Double> timed = Stack.metrics(node);
            assertThat(timed.get("watchfanout_event_latency_seconds_count{stage=\"applied\",}"))
                    .isGreaterThanOrEqualTo(1.0);
            assertThat(timed.get("watchfanout_event_latency_seconds_count{stage=\"written\",}"))
                    .isGreaterThanOrEqualTo(1.0);

            // Idle for three times the bound: heartbeats (one a second) keep the node ready.
            Thread.sleep(9_000);
            assertThat(Stack.get(node.url() + "/readyz").statusCode()).isEqualTo(200);
            Map<String, Double> fresh = Stack.metrics(node);
            assertThat(fresh.get("watchfanout_feed_staleness_seconds")).isLessThan(3.0);
            assertThat(fresh.get("watchfanout_cache_ready")).isEqualTo(1.0);

            signal("STOP", ingester.pid());
            long stopped = System.nanoTime();
            try {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> Stack.get(node.url() + "/readyz").statusCode() == 503);
                System.out.printf(
                        "ingester SIGSTOP: node not ready after %.1f s (--max-feed-staleness 3s)%n",
                        (System.nanoTime() - stopped) / 1e9);
                assertThat(Stack.get(node.url() + "/readyz").body())
                        .contains("feed is stale", "no record from the ingester");
                // The reason says how long the outage has lasted, and keeps saying it as it grows.
                long first = staleSeconds(Stack.get(node.url() + "/readyz").body());
                await().atMost(Duration.ofSeconds(30))
                        .until(() ->
                                staleSeconds(Stack.get(node.url() + "/readyz").body()) > first);
                Map<String, Double> stale = Stack.metrics(node);
                assertThat(stale.get("watchfanout_cache_ready")).isEqualTo(0.0);
                assertThat(stale.get("watchfanout_feed_staleness_seconds")).isGreaterThan(3.0);
                // Still serving what it has: the cache is consistent, only no longer current.
                assertThat(Stack.get(node.url() + "/v1/kv?key=/&prefix=true").statusCode())
                        .isEqualTo(200);
            } finally {
                signal("CONT", ingester.pid());
            }
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> Stack.get(node.url() + "/readyz").statusCode() == 200);
            assertThat(node.process().logTail(200)).contains("feed is stale", "feed is fresh again");

            kafka.stop();
            try {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> Stack.get(node.url() + "/readyz").statusCode() == 503);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> Double.isNaN(Stack.metrics(node).get("watchfanout_consumer_lag_records")));
            } finally {
                kafka.restart();
            }
            await().atMost(Duration.ofSeconds(90))
                    .until(() -> Stack.get(node.url() + "/readyz").statusCode() == 200);
        }
    }

    private static void signal(String name, long pid) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + name, Long.toString(pid))
                        .inheritIO()
                        .start()
                        .waitFor())
                .isZero();
    }

    /** The seconds of readiness's "no record from the ingester for N s", or -1. */
    private static long staleSeconds(String readyz) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("no record from the ingester for (\\d+) s")
                .matcher(readyz);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }
}
