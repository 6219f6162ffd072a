package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * jetcd, a client nobody here wrote, against nodes' etcd API: its watch and KV with two nodes in its
 * endpoint list, one SIGKILLed mid-stream, the watch resuming on the other with nothing lost or
 * repeated; and 1,000 watches over 10 connections that cost etcd one watch.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class EtcdApiClientsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    EtcdApiClientsTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void aJetcdWatchThroughTwoNodesResumesOnTheOtherWhenOneIsKilled(TestInfo info) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka);
                Stack.Node n1 = stack.node("jetcd-1");
                Stack.Node n2 = stack.node("jetcd-2");
                Client viaNodes = Client.builder()
                        .endpoints("http://" + stack.endpoint(n1), "http://" + stack.endpoint(n2))
                        .build()) {
            String p = stack.keys;
            Client direct = stack.etcdClient;
            long from = direct.getKVClient().get(bs(p)).get().getHeader().getRevision() + 1;
            List<String> expected = Collections.synchronizedList(new ArrayList<>());
            List<String> received = Collections.synchronizedList(new ArrayList<>());
            WatchOption opt = WatchOption.builder()
                    .isPrefix(true)
                    .withRevision(from)
                    .withPrevKV(true)
                    .build();
            Watch.Watcher e = direct.getWatchClient().watch(bs(p), opt, r -> add(expected, r.getEvents()));
            Watch.Watcher v = viaNodes.getWatchClient().watch(bs(p), opt, r -> add(received, r.getEvents()));
            try (BackgroundWriter writer = new BackgroundWriter(direct, p, 20)) {
                await().atMost(WAIT).until(() -> received.size() >= 200);
                Stack.Node serving = watchers(n1) > 0 ? n1 : n2;
                Stack.Node other = serving == n1 ? n2 : n1;
                assertThat(watchers(serving)).isPositive();
                serving.process().kill();
                int atKill = received.size();
                await().atMost(WAIT).until(() -> received.size() >= atKill + 200);
                writer.stop();
                long last = direct.getKVClient().get(bs(p)).get().getHeader().getRevision();
                await().atMost(WAIT)
                        .until(() -> expected.size() == received.size()
                                && !expected.isEmpty()
                                && rev(expected.get(expected.size() - 1)) >= last - 1);
                Thread.sleep(500);
                assertThat(received).isEqualTo(expected);
                assertThat(watchers(other)).isPositive();
                // KV through the remaining node: reads from its cache, writes forwarded.
                viaNodes.getKVClient().put(bs(p + "through-node"), bs("v")).get();
                assertThat(kvs(viaNodes, p)).isEqualTo(kvs(direct, p)).isNotEmpty();
            } finally {
                e.close();
                v.close();
            }
            assertThat(stack.ingester.isAlive()).isTrue();
        }
    }

    @Test
    void aThousandWatchesOverTenConnectionsCostEtcdOneWatch(TestInfo info) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            String p = stack.keys;
            Client direct = stack.etcdClient;
            Stack.Node node = stack.node("thousand-1");
            int port = stack.apiPort(node);
            double etcdWatchers = etcdWatcherTotal();
            List<Client> clients = new ArrayList<>();
            List<Watch.Watcher> watches = new ArrayList<>();
            AtomicLong events = new AtomicLong();
            try {
                for (int c = 0; c < 10; c++) {
                    Client client = Client.builder()
                            .endpoints("http://127.0.0.1:" + port)
                            .build();
                    clients.add(client);
                    for (int w = 0; w < 100; w++) {
                        watches.add(client.getWatchClient()
                                .watch(
                                        bs(p),
                                        WatchOption.builder().isPrefix(true).build(),
                                        r -> events.addAndGet(r.getEvents().size())));
                    }
                }
                await().atMost(WAIT).until(() -> watchers(node) >= 1000);
                for (int i = 0; i < 20; i++) {
                    direct.getKVClient().put(bs(p + "k" + i), bs("v" + i)).get();
                }
                await().atMost(WAIT).until(() -> events.get() == 20_000);
                assertThat(etcdWatcherTotal()).isEqualTo(etcdWatchers);
                Map<String, Double> m = Stack.metrics(node);
                assertThat(m.get("watchfanout_frames_encoded_total{encoding=\"etcd\",kind=\"event\",}"))
                        .isEqualTo(20.0);
            } finally {
                watches.forEach(Watch.Watcher::close);
                clients.forEach(Client::close);
            }
            assertThat(stack.ingester.isAlive()).isTrue();
        }
    }

    private static double watchers(Stack.Node node) throws InterruptedException {
        Map<String, Double> m = Stack.metrics(node);
        return m.getOrDefault("watchfanout_watchers{encoding=\"etcd\",}", 0.0)
                + m.getOrDefault("watchfanout_watchers{encoding=\"etcd_prev_kv\",}", 0.0);
    }

    /** etcd's own count of its watchers ({@code etcd_debugging_mvcc_watcher_total} on its /metrics). */
    private double etcdWatcherTotal() throws Exception {
        String text = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(etcd.clientUrl() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        return text.lines()
                .filter(l -> l.startsWith("etcd_debugging_mvcc_watcher_total "))
                .findFirst()
                .map(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1)))
                .orElseThrow();
    }

    private static void add(List<String> into, List<WatchEvent> events) {
        for (WatchEvent e : events) {
            into.add(e.getKeyValue().getModRevision() + " " + e.getEventType() + " "
                    + e.getKeyValue().getKey() + " " + e.getKeyValue().getValue() + " "
                    + e.getPrevKV().getModRevision());
        }
    }

    private static List<String> kvs(Client client, String prefix) throws Exception {
        return client
                .getKVClient()
                .get(bs(prefix), GetOption.builder().isPrefix(true).build())
                .get()
                .getKvs()
                .stream()
                .map(kv -> kv.getKey() + "=" + kv.getValue() + "@" + kv.getModRevision() + "/" + kv.getCreateRevision()
                        + "/" + kv.getVersion())
                .toList();
    }

    private static long rev(String event) {
        return Long.parseLong(event.substring(0, event.indexOf(' ')));
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
