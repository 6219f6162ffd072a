package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.KV;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Digests end to end: an ingester that reads a digest of the watched range every second (a page
 * of 3 keys at a time) and a node that compares what it read from Kafka with each, while keys are
 * written, rewritten and deleted; every digest the node sees is equal.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class DigestEndToEndTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String EQUAL = "watchfanout_digests_total{outcome=\"equal\",}";

    @Test
    @SuppressWarnings("try") // the ingester publishes for the length of its try block
    void everyDigestANodeSeesWhileKeysChangeIsEqual(EtcdServer etcd, KafkaBroker kafka, TestInfo info)
            throws Exception {
        String prefix = TopicPrefixes.unique(info);
        String keys = "/" + prefix + "/";
        try (var ingester = Stack.ingester(
                        etcd.clientUrl(),
                        kafka.bootstrapServers(),
                        prefix,
                        "--key-prefix",
                        keys,
                        "--digest-interval",
                        "1s",
                        "--digest-page-size",
                        "3",
                        "--digest-page-pause",
                        "0s");
                var client = io.etcd.jetcd.Client.builder()
                        .endpoints(etcd.clientUrl())
                        .build()) {
            KV kv = client.getKVClient();
            long last = 0;
            for (int i = 0; i < 40; i++) {
                var key = EtcdApiStack.bs(keys + "k" + (i % 11));
                last = i % 7 == 6
                        ? kv.delete(key).get().getHeader().getRevision()
                        : kv.put(key, EtcdApiStack.bs("v" + i))
                                .get()
                                .getHeader()
                                .getRevision();
            }
            try (Stack.Node node = Stack.node("digest-node", kafka.bootstrapServers(), prefix)) {
                long written = last;
                // Writes go on while the node checks: digests lie behind the records it has read.
                for (int i = 0; i < 20; i++) {
                    written = kv.put(EtcdApiStack.bs(keys + "k" + (i % 5)), EtcdApiStack.bs("w" + i))
                            .get()
                            .getHeader()
                            .getRevision();
                    Thread.sleep(100);
                }
                long lastWrite = written;
                await().atMost(WAIT)
                        .until(() -> Stack.metrics(node).getOrDefault("watchfanout_digest_verified_revision", 0.0)
                                >= lastWrite);
                Map<String, Double> m = Stack.metrics(node);
                assertThat(m.get(EQUAL)).isGreaterThanOrEqualTo(1.0);
                assertThat(m.get("watchfanout_digests_total{outcome=\"different\",}"))
                        .isZero();
                assertThat(m.get("watchfanout_cache_failed")).isZero();
                assertThat(Stack.get(node.url() + "/readyz").statusCode()).isEqualTo(200);
            }
        }
    }
}
