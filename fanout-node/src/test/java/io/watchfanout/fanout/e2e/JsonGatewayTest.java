package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * etcd's JSON gateway on a node's HTTP port, checked with curl against etcd's own gateway on the
 * same requests: ranges from the cache, a watch stream, writes forwarded, and the error answers.
 * Headers differ only in the member id and raft term (the node's own), and a watch's event
 * responses in the header revision (etcd gives a catching-up watch its current revision, the node
 * the revision of the response's last event).
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class JsonGatewayTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    JsonGatewayTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    @Test
    void theGatewayAnswersAsEtcdsOwn(TestInfo info) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            String p = stack.keys;
            Stack.Node node = stack.node("gateway-1");
            KV kv = stack.kv();
            long start = kv.put(bs(p + "a"), bs("1")).get().getHeader().getRevision();
            kv.put(bs(p + "b"), bs("2")).get();
            kv.put(bs(p + "a"), bs("3")).get();
            kv.delete(bs(p + "b")).get();
            String atEtcd = etcd.clientUrl();
            String atNode = node.url();
            String key = b64(p + "a");
            String range =
                    "\"key\":\"" + b64(p) + "\",\"range_end\":\"" + b64(p.substring(0, p.length() - 1) + "0") + "\"";
            // The node's cache catches up with etcd, then ranges answer the same.
            await().atMost(WAIT)
                    .until(() -> same(
                            curl(atNode, "/v3/kv/range", "{" + range + "}"),
                            curl(atEtcd, "/v3/kv/range", "{" + range + "}")));
            for (String body : List.of(
                    "{\"key\":\"" + key + "\"}",
                    "{" + range + ",\"count_only\":true}",
                    "{" + range + ",\"keys_only\":true,\"limit\":\"1\"}",
                    "{\"key\":\"" + key + "\",\"serializable\":true}",
                    "{\"key\":\"" + key + "\",\"bogus\":1}",
                    "{\"key\":\"\"}",
                    "")) {
                assertThat(normalize(curl(atNode, "/v3/kv/range", body)))
                        .as(body)
                        .isEqualTo(normalize(curl(atEtcd, "/v3/kv/range", body)));
            }
            // Bodies that are not JSON: the same status and code (the message is each parser's own).
            for (String bad : List.of("garbage", "{\"key\":", "[1]")) {
                assertThat(curl(atNode, "/v3/kv/range", bad))
                        .as(bad)
                        .startsWith("400 {\"error\":")
                        .endsWith(",\"code\":3}");
                assertThat(curl(atEtcd, "/v3/kv/range", bad))
                        .as(bad)
                        .startsWith("400 {\"error\":")
                        .endsWith(",\"code\":3}");
            }
            // A stream's unreadable body too: 400 and InvalidArgument, its message without Java's
            // exception class names.
            for (String bad : List.of("garbage", "{", "not json", "{\"create_request\":{\"key\":\"!!!notbase64\"}}")) {
                assertThat(curl(atNode, "/v3/watch", bad))
                        .as(bad)
                        .startsWith("400 {\"error\":\"invalid JSON request body: ")
                        .endsWith(",\"code\":3}")
                        .doesNotContain("java.", "Exception");
            }
            assertThat(curl(atNode, "/v3/watch", "{")).contains("End of input at line 1 column 2");
            assertThat(curl(atNode, "/v3/watch", "{\"create_request\":{\"key\":\"!!!notbase64\"}}"))
                    .contains("base64");
            // Writes through the node's gateway reach etcd.
            String put = curl(
                    atNode,
                    "/v3/kv/put",
                    "{\"key\":\"" + b64(p + "via-gateway") + "\",\"value\":\"" + b64("g") + "\"}");
            assertThat(put).startsWith("200 {\"header\":{\"cluster_id\":");
            assertThat(kv.get(bs(p + "via-gateway")).get().getKvs()).hasSize(1);
            assertThat(curl(atNode, "/v3/nope", "{}"))
                    .isEqualTo("404 {\"error\":\"Not Found\",\"message\":\"Not Found\",\"code\":5}");
            assertThat(curl("GET", atNode, "/v3/kv/range", ""))
                    .isEqualTo("405 {\"error\":\"Method Not Allowed\",\"message\":\"Method Not Allowed\",\"code\":12}");
            assertThat(curl(atEtcd, "/v3/nope", "{}")).startsWith("404");

            // A watch from a past revision, streamed: the same lines as etcd's gateway.
            String watch = "{\"create_request\":{" + range + ",\"start_revision\":\"" + start + "\",\"prev_kv\":true}}";
            List<String> fromNode = stream(atNode, "/v3/watch", watch);
            List<String> fromEtcd = stream(atEtcd, "/v3/watch", watch);
            assertThat(fromNode).hasSizeGreaterThanOrEqualTo(2);
            assertThat(events(fromNode)).isEqualTo(events(fromEtcd));
            assertThat(fromNode.get(0)).contains("\"created\":true");

            // A value of 3 MiB (a 4 MiB body) through the gateway, as etcd's own takes it; 30 MiB is refused.
            // (After the watch above, whose 3-second window a 3 MiB event would not fit on a busy machine.)
            Path big = Files.createTempFile("gateway", ".json");
            try {
                Files.writeString(
                        big, "{\"key\":\"" + b64(p + "big") + "\",\"value\":\"" + b64("v".repeat(3 << 20)) + "\"}");
                assertThat(curlFile(atNode, "/v3/kv/put", big)).startsWith("200 {\"header\":");
                assertThat(kv.get(bs(p + "big"))
                                .get()
                                .getKvs()
                                .get(0)
                                .getValue()
                                .size())
                        .isEqualTo(3 << 20);
                Files.writeString(
                        big, "{\"key\":\"" + b64(p + "huge") + "\",\"value\":\"" + "A".repeat(30 << 20) + "\"}");
                assertThat(curlFile(atNode, "/v3/kv/put", big))
                        .startsWith("413 {\"error\":")
                        .endsWith(",\"code\":8}");
            } finally {
                Files.delete(big);
            }

            // GET /v1/kv without resourceVersion is a consistent read: a write etcd acknowledged is in it.
            for (int i = 0; i < 20; i++) {
                long rev =
                        kv.put(bs(p + "fresh"), bs("v" + i)).get().getHeader().getRevision();
                String list = Stack.get(atNode + "/v1/kv?key=" + p + "fresh").body();
                assertThat(list).contains(b64("v" + i));
                assertThat(Long.parseLong(list.replaceAll(".*\"resourceVersion\":\"(\\d+)\".*", "$1")))
                        .isGreaterThanOrEqualTo(rev);
            }
            assertThat(stack.ingester.isAlive()).isTrue();
        }
    }

    /** Lines of a streamed answer within five seconds. */
    private static List<String> stream(String base, String path, String body) throws Exception {
        Process c = new ProcessBuilder("curl", "-s", "-N", "--max-time", "5", "-X", "POST", base + path, "-d", body)
                .redirectErrorStream(true)
                .start();
        String out = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        c.waitFor(10, TimeUnit.SECONDS);
        List<String> lines = new ArrayList<>();
        out.lines().filter(l -> !l.isBlank()).forEach(lines::add);
        return lines;
    }

    /** Each line's events and flags, without the header (whose revision differs, see the class comment). */
    private static List<String> events(List<String> lines) {
        List<String> out = new ArrayList<>();
        for (String l : lines) {
            out.add(l.replaceAll("\"header\":\\{[^}]*\\},?", ""));
        }
        return out;
    }

    private static boolean same(String a, String b) {
        return normalize(a).equals(normalize(b));
    }

    /** The answer without the member id and raft term, which are the node's own. */
    private static String normalize(String answer) {
        return answer.replaceAll("\"member_id\":\"\\d+\",?", "")
                .replaceAll(",?\"raft_term\":\"\\d+\"", "")
                .replaceAll("\"revision\":\"\\d+\"", "\"revision\":\"R\"");
    }

    /** The HTTP status and the body of a POST with curl. */
    private static String curl(String base, String path, String body) throws Exception {
        return curl("POST", base, path, body);
    }

    /** As {@link #curl(String, String, String)}, with another method. */
    private static String curl(String method, String base, String path, String body) throws Exception {
        List<String> args = new java.util.ArrayList<>(
                List.of("curl", "-s", "--max-time", "10", "-w", "\\n%{http_code}", "-X", method, base + path));
        if (!body.isEmpty() || method.equals("POST")) {
            args.addAll(List.of("--data-binary", body));
        }
        Process c = new ProcessBuilder(args).redirectErrorStream(true).start();
        String out = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        c.waitFor(15, TimeUnit.SECONDS);
        int nl = out.lastIndexOf('\n');
        return out.substring(nl + 1) + " " + (nl < 0 ? "" : out.substring(0, nl).strip());
    }

    /** As {@link #curl}, the body read from a file. */
    private static String curlFile(String base, String path, Path body) throws Exception {
        return curl(base, path, "@" + body);
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
