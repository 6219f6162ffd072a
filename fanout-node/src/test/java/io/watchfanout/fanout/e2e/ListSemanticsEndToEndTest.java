package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.util.JsonFormat;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Kubernetes' list semantics end to end: real etcd, real Kafka, the real ingester jar and a
 * fan-out node as child processes. Every list is compared with etcd's own range read at the
 * list's revision ({@code etcdctl get --prefix --rev N}); lists and watch-lists ahead of the
 * node are asked while writes go on.
 */
class ListSemanticsEndToEndTest extends StackTest {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ListSemanticsEndToEndTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    /**
     * The ingester and a node that waits up to a minute for a revision ahead of it: the writes that
     * bring it there run on a shared, busy machine.
     */
    private Stack.Node start(String... extra) throws Exception {
        closer.keep(Stack.ingester(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix));
        String[] flags = new String[extra.length + 2];
        flags[0] = "--resource-version-wait";
        flags[1] = "60s";
        System.arraycopy(extra, 0, flags, 2, extra.length);
        return closer.keep(Stack.node("node-a", kafka.bootstrapServers(), topicPrefix, flags));
    }

    private static void awaitNode(Stack.Node node, long revision) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> Stack.metrics(node).get("watchfanout_cache_revision") >= revision);
    }

    private String prefixQuery() {
        return "key=" + URLEncoder.encode(keyPrefix, StandardCharsets.UTF_8) + "&prefix=true";
    }

    private static KeyValueList list(Stack.Node node, String query) throws Exception {
        HttpResponse<String> r = Stack.get(node.url() + "/v1/kv?" + query);
        assertThat(r.statusCode()).as(query + ": " + r.body()).isEqualTo(200);
        KeyValueList.Builder b = KeyValueList.newBuilder();
        JsonFormat.parser().merge(r.body(), b);
        return b.build();
    }

    /**
     * Every page of a paged list from {@code firstQuery}: all at one revision, each page but the
     * last with remainingItemCount equal to what is truly left.
     */
    private List<KeyValue> pages(Stack.Node node, String firstQuery, long expectedRevision, int expectedTotal)
            throws Exception {
        List<KeyValue> all = new ArrayList<>();
        String token = "";
        do {
            KeyValueList page = list(
                    node,
                    token.isEmpty()
                            ? firstQuery
                            : prefixQuery() + "&limit=7&continue=" + URLEncoder.encode(token, StandardCharsets.UTF_8));
            assertThat(page.getResourceVersion()).isEqualTo(expectedRevision);
            all.addAll(page.getKvsList());
            token = page.getContinue();
            if (!token.isEmpty()) {
                assertThat(page.getRemainingItemCount())
                        .as("after " + all.size() + " key-values")
                        .isEqualTo(expectedTotal - all.size());
            } else {
                assertThat(page.hasRemainingItemCount()).isFalse();
            }
        } while (!token.isEmpty());
        return all;
    }

    @Test
    void exactListsAtOlderRevisionsEqualEtcdsRangeAtThoseRevisions() throws Exception {
        Stack.Node node = start();
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 11, 90);
        long first = workload.run(300);
        long second = workload.run(200);
        long end = workload.run(200);
        awaitNode(node, end);
        for (long rv : new long[] {first, second, end}) {
            List<KeyValue> expected = etcdAt(rv);
            assertThat(expected).as("keys at " + rv).hasSizeGreaterThan(20);
            assertThat(list(node, prefixQuery() + "&resourceVersion=" + rv + "&resourceVersionMatch=Exact")
                            .getKvsList())
                    .as("Exact at " + rv)
                    .containsExactlyElementsOf(expected);
            assertThat(pages(
                            node,
                            prefixQuery() + "&limit=7&resourceVersion=" + rv + "&resourceVersionMatch=Exact",
                            rv,
                            expected.size()))
                    .as("paged Exact at " + rv)
                    .containsExactlyElementsOf(expected);
            // Kubernetes' legacy rule: a paged list at resourceVersion=N is exact.
            assertThat(pages(node, prefixQuery() + "&limit=7&resourceVersion=" + rv, rv, expected.size()))
                    .as("paged legacy at " + rv)
                    .containsExactlyElementsOf(expected);
        }
        KeyValueList notOlder =
                list(node, prefixQuery() + "&resourceVersion=" + first + "&resourceVersionMatch=NotOlderThan");
        assertThat(notOlder.getResourceVersion()).isGreaterThanOrEqualTo(end);
        assertThat(notOlder.getKvsList()).containsExactlyElementsOf(etcdAt(notOlder.getResourceVersion()));
        KeyValueList current = list(node, prefixQuery() + "&limit=5");
        assertThat(pages(
                        node,
                        prefixQuery() + "&limit=5",
                        current.getResourceVersion(),
                        etcdAt(current.getResourceVersion()).size()))
                .as("a most-recent paged list")
                .containsExactlyElementsOf(etcdAt(current.getResourceVersion()));
    }

    @Test
    void listsAndWatchListsAheadOfTheNodeWaitForItWhileWritesGoOn() throws Exception {
        Stack.Node node = start();
        new EtcdWorkload(etcd, keyPrefix, 3, 60).run(100);
        try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 20)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> writer.operations() > 20);
            // etcd's revision + 30 is ahead of the node (never ahead of etcd) when asked.
            long exactAt = EtcdWorkload.currentRevision(etcd) + 30;
            KeyValueList exact =
                    list(node, prefixQuery() + "&resourceVersion=" + exactAt + "&resourceVersionMatch=Exact");
            assertThat(exact.getResourceVersion())
                    .as("exactly the revision asked")
                    .isEqualTo(exactAt);
            assertThat(exact.getKvsList()).containsExactlyElementsOf(etcdAt(exactAt));

            long notOlderThan = EtcdWorkload.currentRevision(etcd) + 30;
            KeyValueList notOlder = list(
                    node, prefixQuery() + "&resourceVersion=" + notOlderThan + "&resourceVersionMatch=NotOlderThan");
            assertThat(notOlder.getResourceVersion()).isGreaterThanOrEqualTo(notOlderThan);
            assertThat(notOlder.getKvsList()).containsExactlyElementsOf(etcdAt(notOlder.getResourceVersion()));

            // A watch-list ahead of the node: the initial state at S >= N, once the node is there.
            long ahead = EtcdWorkload.currentRevision(etcd) + 30;
            assertWatchList(node, ahead);
            // And one behind it: the initial state at the node's revision, not at N.
            long behind = EtcdWorkload.currentRevision(etcd) - 40;
            awaitNode(node, behind + 40);
            long s = assertWatchList(node, behind);
            assertThat(s).isGreaterThanOrEqualTo(behind + 40);
        }
    }

    /**
     * Opens a watch-list from {@code resourceVersion}, checks that the initial state is etcd's at
     * the closing bookmark's revision S (>= the revision asked) and that the events after it follow
     * S, and returns S.
     */
    private long assertWatchList(Stack.Node node, long resourceVersion) throws Exception {
        HttpResponse<InputStream> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(node.url() + "/v1/watch?" + prefixQuery()
                                + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion="
                                + resourceVersion))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            List<KeyValue> initial = new ArrayList<>();
            WatchEvent f;
            while ((f = Frames.parseJsonLine(in.readLine())).getType() == WatchEvent.Type.ADDED) {
                initial.add(f.getObject());
            }
            assertThat(f.getType()).isEqualTo(WatchEvent.Type.BOOKMARK);
            assertThat(f.getInitialEventsEnd()).isTrue();
            long s = f.getResourceVersion();
            assertThat(s).as("the initial state's revision").isGreaterThanOrEqualTo(resourceVersion);
            assertThat(initial).containsExactlyElementsOf(etcdAt(s));
            WatchEvent next;
            do {
                next = Frames.parseJsonLine(in.readLine());
            } while (next.getType() == WatchEvent.Type.BOOKMARK);
            assertThat(next.getResourceVersion()).isGreaterThan(s);
            return s;
        }
    }

    @Test
    void anExactListBeforeTheHistoryIs410Expired() throws Exception {
        Stack.Node node = start("--history-max-events", "50");
        EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 7, 40);
        long old = workload.run(20);
        long end = workload.run(300);
        awaitNode(node, end);
        HttpResponse<String> expired = Stack.get(
                node.url() + "/v1/kv?" + prefixQuery() + "&resourceVersion=" + old + "&resourceVersionMatch=Exact");
        assertThat(expired.statusCode()).as(expired.body()).isEqualTo(410);
        Status status = Frames.parseStatus(expired.body());
        assertThat(status.getReason()).isEqualTo("Expired");
        assertThat(status.getMessage()).contains("too old resource version: " + old);
        // Within the window it is served, exactly.
        long recent = end - 5;
        KeyValueList exact = list(node, prefixQuery() + "&resourceVersion=" + recent + "&resourceVersionMatch=Exact");
        assertThat(exact.getResourceVersion()).isEqualTo(recent);
        assertThat(exact.getKvsList()).containsExactlyElementsOf(etcdAt(recent));
    }
}
