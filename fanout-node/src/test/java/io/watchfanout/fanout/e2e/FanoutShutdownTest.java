package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TestPrefix;
import io.watchfanout.testkit.WatchClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Graceful shutdown as orchestrators use it: SIGTERM to a fan-out node with 100 open
 * watchers ends every stream with a final bookmark, and each watcher resumes on another node
 * from that bookmark with nothing missed.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
@SuppressWarnings("try") // the ingester runs for the length of the try block
class FanoutShutdownTest {
    private final EtcdServer etcdServer;
    private final KafkaBroker kafka;

    FanoutShutdownTest(EtcdServer etcdServer, KafkaBroker kafka) {
        this.etcdServer = etcdServer;
        this.kafka = kafka;
    }

    @Test
    void sigtermEndsEveryStreamWithABookmarkToResumeFrom(Client etcd, TestPrefix names) throws Exception {
        String prefix = names.topicPrefix();
        String keyPrefix = names.keyPrefix();
        List<WatchClient> clients = new ArrayList<>();
        try (JavaProcess ingester = Stack.ingester(etcdServer.clientUrl(), kafka.bootstrapServers(), prefix);
                Stack.Node a = Stack.node("node-a", kafka.bootstrapServers(), prefix);
                Stack.Node b = Stack.node("node-b", kafka.bootstrapServers(), prefix)) {
            long start = EtcdWorkload.currentRevision(etcd);
            for (int i = 0; i < 100; i++) {
                WatchClient c = new WatchClient("w" + i, keyPrefix + "k" + (i % 10), "prefix", i % 2 == 0);
                clients.add(c);
                assertThat(c.connect(b.url(), start)).isEqualTo(200);
            }
            try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 5)) {
                await().atMost(Duration.ofSeconds(30)).until(() -> writer.operations() > 200);
                b.process().stop(Duration.ofSeconds(30));
                for (WatchClient c : clients) {
                    await().atMost(Duration.ofSeconds(10)).until(c::ended);
                    c.awaitReader();
                    List<WatchEvent> frames = c.frames();
                    assertThat(frames).as(c.name()).isNotEmpty();
                    assertThat(frames.get(frames.size() - 1).getType())
                            .as(c.name() + " ends with a bookmark")
                            .isEqualTo(WatchEvent.Type.BOOKMARK);
                    long bookmark = frames.get(frames.size() - 1).getResourceVersion();
                    assertThat(c.connect(a.url(), bookmark)).as(c.name()).isEqualTo(200);
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> writer.operations() > 400);
            }
            long end = EtcdWorkload.currentRevision(etcd);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> clients.stream().allMatch(c -> c.lastResourceVersion() >= end));
            for (int i = 0; i < 10; i++) {
                ByteString key = ByteString.copyFromUtf8(keyPrefix + "k" + i);
                byte[] endKey = key.toByteArray();
                endKey[endKey.length - 1]++;
                List<Expected.Frame> expected =
                        Expected.directWatch(etcd, key, ByteString.copyFrom(endKey), start, end);
                for (int j = i; j < clients.size(); j += 10) {
                    List<Expected.Frame> received = Expected.received(
                                    clients.get(j).frames())
                            .stream()
                            .filter(f -> f.revision() <= end)
                            .toList();
                    assertThat(received).as(clients.get(j).name()).containsExactlyElementsOf(expected);
                }
            }
        } finally {
            clients.forEach(WatchClient::close);
        }
    }
}
