package io.watchfanout.fanout.v1;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.transport.TestNode;
import io.watchfanout.fanout.transport.TestNodes;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Kubernetes' list semantics on {@code GET /v1/kv} ({@code resourceVersionMatch},
 * {@code remainingItemCount}, the refusals) and {@code resourceVersionMatch} on
 * {@code GET /v1/watch}, over HTTP against a node fed from memory. The end-to-end counterpart
 * against etcd and Kafka is {@code e2e.ListSemanticsEndToEndTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvListSemanticsTest {
    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    private TestNode node;

    private HttpResponse<String> get(String pathAndQuery) throws Exception {
        return client.send(
                HttpRequest.newBuilder(node.uri(pathAndQuery)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private KeyValueList list(String pathAndQuery) throws Exception {
        HttpResponse<String> r = get(pathAndQuery);
        assertThat(r.statusCode()).as(pathAndQuery + ": " + r.body()).isEqualTo(200);
        KeyValueList.Builder b = KeyValueList.newBuilder();
        JsonFormat.parser().merge(r.body(), b);
        return b.build();
    }

    private static List<String> keys(List<KeyValue> kvs) {
        return kvs.stream().map(kv -> kv.getKey().toStringUtf8()).toList();
    }

    @Test
    void remainingItemCountIsTheTrueRemainderOnEveryPageWhateverTheLimits() throws Exception {
        node = nodes.start(1000, 256, true);
        for (int i = 0; i < 23; i++) {
            node.feed(node.etcd.put(String.format("/p/%02d", i), "v" + i));
        }
        node.feed(node.etcd.put("/q", "outside"));
        List<String> expected = keys(new ArrayList<>(node.etcd.state().values())).stream()
                .filter(k -> k.startsWith("/p/"))
                .toList();
        HttpResponse<String> first = get("/v1/kv?key=%2Fp%2F&prefix=true&limit=5");
        assertThat(first.body()).contains("\"remainingItemCount\":\"18\"");
        List<String> seen = new ArrayList<>();
        String token = "";
        int[] limits = {5, 5, 7, 1, 100};
        int page = 0;
        long revision = -1;
        do {
            KeyValueList l = list("/v1/kv?key=%2Fp%2F&prefix=true&limit=" + limits[page]
                    + (token.isEmpty() ? "" : "&continue=" + URLEncoder.encode(token, StandardCharsets.UTF_8)));
            revision = revision < 0 ? l.getResourceVersion() : revision;
            assertThat(l.getResourceVersion()).isEqualTo(revision);
            seen.addAll(keys(l.getKvsList()));
            token = l.getContinue();
            if (token.isEmpty()) {
                assertThat(l.hasRemainingItemCount())
                        .as("the last page has none")
                        .isFalse();
            } else {
                assertThat(l.getRemainingItemCount()).as("page " + page).isEqualTo(expected.size() - seen.size());
            }
            page++;
            // Writes between the pages change neither the pages nor the count.
            node.feed(node.etcd.put("/p/00a", "new"));
            node.feed(node.etcd.delete(String.format("/p/%02d", 20 - page)));
        } while (!token.isEmpty());
        assertThat(page).isEqualTo(5);
        assertThat(seen).containsExactlyElementsOf(expected);
        assertThat(list("/v1/kv?key=%2Fp%2F&prefix=true").hasRemainingItemCount())
                .as("unpaged")
                .isFalse();
        assertThat(list("/v1/kv?key=%2Fp%2F&prefix=true&limit=1000").hasRemainingItemCount())
                .as("one page")
                .isFalse();
    }

    @Test
    void exactAnswersAtTheRevisionAskedAndExpiresBeforeTheHistory() throws Exception {
        node = nodes.start(6, 256, true);
        for (int i = 0; i < 5; i++) {
            node.feed(node.etcd.put("/e/" + i, "v" + i));
        }
        long then = node.etcd.revision();
        Map<com.google.protobuf.ByteString, KeyValue> stateThen = node.etcd.state();
        node.feed(node.etcd.put("/e/1", "changed"));
        node.feed(node.etcd.delete("/e/2"));
        node.feed(node.etcd.put("/e/9", "new"));
        KeyValueList exact =
                list("/v1/kv?key=%2Fe%2F&prefix=true&resourceVersion=" + then + "&resourceVersionMatch=Exact");
        assertThat(exact.getResourceVersion()).isEqualTo(then);
        assertThat(exact.getKvsList()).containsExactlyElementsOf(stateThen.values());
        KeyValueList notOlder =
                list("/v1/kv?key=%2Fe%2F&prefix=true&resourceVersion=" + then + "&resourceVersionMatch=NotOlderThan");
        assertThat(notOlder.getResourceVersion()).isEqualTo(node.etcd.revision());
        assertThat(notOlder.getKvsList())
                .containsExactlyElementsOf(node.etcd.state().values());
        // Kubernetes' legacy rule: with a limit, resourceVersion=N alone is exact too.
        KeyValueList legacy = list("/v1/kv?key=%2Fe%2F&prefix=true&limit=2&resourceVersion=" + then);
        assertThat(legacy.getResourceVersion()).isEqualTo(then);
        assertThat(keys(legacy.getKvsList())).containsExactly("/e/0", "/e/1");
        assertThat(legacy.getKvs(1).getValue().toStringUtf8()).isEqualTo("v1");
        assertThat(legacy.getRemainingItemCount()).isEqualTo(3);
        assertThat(list("/v1/kv?key=%2Fe%2F&prefix=true&resourceVersion=" + then)
                        .getResourceVersion())
                .as("without a limit: not older than")
                .isEqualTo(node.etcd.revision());
        for (int i = 0; i < 10; i++) {
            node.feed(node.etcd.put("/e/x", "push the history on " + i));
        }
        HttpResponse<String> expired =
                get("/v1/kv?key=%2Fe%2F&prefix=true&resourceVersion=" + then + "&resourceVersionMatch=Exact");
        assertThat(expired.statusCode()).isEqualTo(410);
        Status s = Frames.parseStatus(expired.body());
        assertThat(s.getReason()).isEqualTo("Expired");
        assertThat(s.getMessage()).contains("too old resource version: " + then);
        HttpResponse<String> ahead = get("/v1/kv?key=a&resourceVersion=99999&resourceVersionMatch=Exact");
        assertThat(ahead.statusCode()).isEqualTo(504);
        assertThat(Frames.parseStatus(ahead.body()).getReason()).isEqualTo("Timeout");
        assertThat(get("/v1/kv?key=a&resourceVersion=99999&resourceVersionMatch=NotOlderThan")
                        .statusCode())
                .isEqualTo(504);
        assertThat(list("/v1/kv?key=%2Fe%2F&prefix=true&resourceVersion=0&resourceVersionMatch=NotOlderThan")
                        .getResourceVersion())
                .as("any")
                .isEqualTo(node.etcd.revision());
    }

    @Test
    void badCombinationsAre400WithKubernetesWords() throws Exception {
        node = nodes.start(1000, 256, true);
        node.feed(node.etcd.put("/b/1", "x"));
        node.feed(node.etcd.put("/b/2", "x"));
        String token = list("/v1/kv?key=%2Fb%2F&prefix=true&limit=1").getContinue();
        assertThat(token).isNotEmpty();
        String[][] bad = {
            {
                "/v1/kv?key=a&resourceVersionMatch=NotOlderThan",
                "resourceVersionMatch is forbidden unless resourceVersion"
            },
            {"/v1/kv?key=a&resourceVersionMatch=Exact", "resourceVersionMatch is forbidden unless resourceVersion"},
            {
                "/v1/kv?key=a&resourceVersion=0&resourceVersionMatch=Exact",
                "\"exact\" is forbidden for resourceVersion \"0\""
            },
            {"/v1/kv?key=a&resourceVersion=3&resourceVersionMatch=Latest", "Unsupported value: \"Latest\""},
            {
                "/v1/kv?key=%2Fb%2F&prefix=true&continue=" + token + "&resourceVersion=3",
                "specifying resource version is not allowed when using continue"
            },
            {
                "/v1/kv?key=%2Fb%2F&prefix=true&continue=" + token
                        + "&resourceVersion=3&resourceVersionMatch=NotOlderThan",
                "resourceVersionMatch is forbidden when continue is provided"
            },
            {
                "/v1/kv?key=%2Fb%2F&prefix=true&continue=" + token + "&resourceVersion=3&resourceVersionMatch=Exact",
                "resourceVersionMatch is forbidden when continue is provided"
            },
            {"/v1/watch?key=a&resourceVersionMatch=NotOlderThan", "forbidden for watch unless sendInitialEvents"},
            {
                "/v1/watch?key=a&sendInitialEvents=true&resourceVersion=101&resourceVersionMatch=Exact",
                "Unsupported value: \"Exact\": supported values: \"NotOlderThan\""
            },
        };
        for (String[] b : bad) {
            HttpResponse<String> r = get(b[0]);
            assertThat(r.statusCode()).as(b[0]).isEqualTo(400);
            Status s = Frames.parseStatus(r.body());
            assertThat(s.getReason()).isEqualTo("BadRequest");
            assertThat(s.getMessage()).as(b[0]).contains(b[1]).contains("expected");
        }
        // resourceVersion=0 with a token: Kubernetes treats it as the token alone.
        KeyValueList second = list("/v1/kv?key=%2Fb%2F&prefix=true&resourceVersion=0&continue=" + token);
        assertThat(keys(second.getKvsList())).containsExactly("/b/2");
    }

    @Test
    void aWatchListWithNotOlderThanSendsTheInitialStateThenEvents() throws Exception {
        node = nodes.start(1000, 256, true);
        node.feed(node.etcd.put("/w/1", "a"));
        node.feed(node.etcd.put("/w/2", "b"));
        long at = node.etcd.revision();
        HttpResponse<InputStream> r = client.send(
                HttpRequest.newBuilder(node.uri("/v1/watch?key=%2Fw%2F&prefix=true"
                                + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion="
                                + (at - 1)))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            List<String> initial = new ArrayList<>();
            WatchEvent f;
            while ((f = Frames.parseJsonLine(in.readLine())).getType() == WatchEvent.Type.ADDED) {
                initial.add(f.getObject().getKey().toStringUtf8());
            }
            assertThat(initial).containsExactly("/w/1", "/w/2");
            assertThat(f.getType()).isEqualTo(WatchEvent.Type.BOOKMARK);
            assertThat(f.getInitialEventsEnd()).isTrue();
            assertThat(f.getResourceVersion()).isEqualTo(at);
            node.feed(node.etcd.put("/w/3", "c"));
            WatchEvent next;
            do {
                next = Frames.parseJsonLine(in.readLine());
            } while (next.getType() == WatchEvent.Type.BOOKMARK);
            assertThat(next.getObject().getKey().toStringUtf8()).isEqualTo("/w/3");
        }
    }
}
