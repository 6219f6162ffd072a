package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node that rebuilt after the writes has history from its first second: it loads the events
 * just before its state checkpoint into its window, so that a watch from a revision before its
 * start is served (HTTP and the etcd API) instead of 410, with exactly etcd's events.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class HistoryPreloadTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    HistoryPreloadTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void aFreshNodeResumesWatchesFromBeforeItsStart(TestInfo info) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            String p = stack.keys;
            KV kv = stack.kv();
            long first = kv.put(bs(p + "k0"), bs("v0")).get().getHeader().getRevision();
            for (int i = 1; i < 200; i++) {
                kv.put(bs(p + "k" + (i % 20)), bs("v" + i)).get();
            }
            kv.txn()
                    .Then(
                            io.etcd.jetcd.op.Op.put(bs(p + "t1"), bs("t"), io.etcd.jetcd.options.PutOption.DEFAULT),
                            io.etcd.jetcd.op.Op.delete(bs(p + "k1"), io.etcd.jetcd.options.DeleteOption.DEFAULT))
                    .commit()
                    .get();
            long last = kv.delete(bs(p + "k2")).get().getHeader().getRevision();
            Stack.Node node = stack.node("preload-1");
            // HTTP: every event after the first write, none of them 410.
            HttpResponse<String> watch = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(node.url() + "/v1/watch?key=" + p
                                            + "&prefix=true&resourceVersion=" + first + "&timeoutSeconds=8"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(watch.statusCode()).isEqualTo(200);
            assertThat(watch.body()).doesNotContain("Expired");
            assertThat(watch.body()
                            .lines()
                            .filter(l ->
                                    l.contains("\"ADDED\"") || l.contains("\"MODIFIED\"") || l.contains("\"DELETED\""))
                            .count())
                    .isEqualTo(last - first + 1);

            // The etcd API: the same events as etcd's own watch from the same revision.
            List<List<String>> lines =
                    RawWatchStream.onEtcdAndNode(stack.etcdChannel(), stack.channel(node), p, first + 1, last, WAIT);
            assertThat(lines.get(1)).isEqualTo(lines.get(0)).hasSize((int) (last - first + 1));
            assertThat(node.process().logTail(200)).contains("revisions from offsets");
            assertThat(stack.ingester.isAlive()).isTrue();
        }
    }

    private static ByteSequence bs(String s) {
        return EtcdApiStack.bs(s);
    }
}
