package io.watchfanout.fanout.frontend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.etcd.EtcdApiSettings;
import io.watchfanout.fanout.security.TestAccess;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.FrontEndNode;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Every front end of a node with authentication and a policy file (alice may watch and read
 * {@code /registry/configmaps/}, bob {@code /registry/}): HTTP JSON, protobuf and SSE watches,
 * {@code /v1/kv} lists, etcd's JSON gateway and the etcd gRPC API refuse requests without
 * credentials, and ranges outside the grant however they are spelled; a rewritten policy ends
 * alice's open watches and not bob's; the watch limits answer 429 / a canceled watch for one
 * identity while another is served; the audit log has the start, end and refusals.
 */
class SecuredFrontEndsTest {
    /** etcd's cancel reason for a watch its user may not make. */
    private static final String PERMISSION_DENIED =
            "rpc error: code = PermissionDenied desc = etcdserver: permission denied";

    private static final String CONFIGMAPS = "/registry/configmaps/";
    private static final String RULES =
            TestAccess.rule("alice", CONFIGMAPS) + ", " + TestAccess.rule("bob", "/registry/");

    @TempDir
    Path dir;

    private final EtcdLog etcd = new EtcdLog(100);
    private final HttpClient client = HttpClient.newHttpClient();
    private TestAccess access;
    private WatchCore core;
    private RecordFeed applier;
    private FrontEndNode node;

    private void start(WatchLimits limits) throws Exception {
        access = TestAccess.create(dir.resolve("policy.json"), RULES, limits);
        node = new FrontEndNode(
                CoreSettings.of(1000, Duration.ofMinutes(10), 64, "sec-test"),
                true,
                true,
                access.access(),
                new EtcdApiSettings("127.0.0.1", 0, "sec-test", Duration.ofMinutes(10), Duration.ofSeconds(1)),
                FrontEndNode.httpSettings(Duration.ofMillis(300), "sec-test", Duration.ofMinutes(10)),
                true);
        core = node.core;
        applier = node.feed;
    }

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
        }
    }

    // ---- HTTP --------------------------------------------------------------------------

    /** An HTTP response whose body a daemon thread reads as it comes. */
    private static final class Stream implements AutoCloseable {
        final HttpResponse<InputStream> response;
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();

        Stream(HttpResponse<InputStream> response) {
            this.response = response;
            Thread t = new Thread(() -> {
                byte[] buf = new byte[8192];
                try (InputStream in = response.body()) {
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        synchronized (body) {
                            body.write(buf, 0, n);
                        }
                    }
                } catch (java.io.IOException e) {
                    // closed by the test or the node
                }
            });
            t.setDaemon(true);
            t.start();
        }

        int status() {
            return response.statusCode();
        }

        String text() {
            synchronized (body) {
                return body.toString(StandardCharsets.UTF_8);
            }
        }

        @Override
        public void close() throws java.io.IOException {
            response.body().close();
        }
    }

    private Stream get(String target, String accept, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.http.port() + target))
                .header("Accept", accept);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        Stream s = new Stream(client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream()));
        node.keep(s);
        return s;
    }

    private Stream watch(String query, String accept, String token) throws Exception {
        return get("/v1/watch?" + query, accept, token);
    }

    private HttpResponse<String> gateway(String path, String json, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.http.port() + path))
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String rangeJson(String key, String rangeEnd) {
        return "{\"key\":\"" + b64(key) + "\",\"range_end\":\"" + b64(rangeEnd) + "\"}";
    }

    private static final String JSON = "application/json";
    private static final String PROTOBUF = "application/x-protobuf";
    private static final String SSE = "text/event-stream";
    private static final String ALICE_WATCH = "key=/registry/configmaps/&prefix=true";

    // ---- gRPC --------------------------------------------------------------------------

    private <S extends io.grpc.stub.AbstractStub<S>> S as(S stub, String header, String value) {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of(header, Metadata.ASCII_STRING_MARSHALLER), value);
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    }

    private KVGrpc.KVBlockingStub kv(String token) {
        KVGrpc.KVBlockingStub stub = KVGrpc.newBlockingStub(node.channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        return token == null ? stub : as(stub, "authorization", "Bearer " + token);
    }

    /** A Watch stream of the etcd API and what it received. */
    private final class GrpcWatches implements StreamObserver<WatchResponse> {
        final List<WatchResponse> received = new CopyOnWriteArrayList<>();
        volatile Throwable error;
        final StreamObserver<WatchRequest> requests;

        GrpcWatches(String header, String value) {
            WatchGrpc.WatchStub stub = WatchGrpc.newStub(node.channel);
            requests = (header == null ? stub : as(stub, header, value)).watch(this);
        }

        void create(String key, String rangeEnd) {
            requests.onNext(WatchRequest.newBuilder()
                    .setCreateRequest(WatchCreateRequest.newBuilder()
                            .setKey(ByteString.copyFromUtf8(key))
                            .setRangeEnd(ByteString.copyFromUtf8(rangeEnd)))
                    .build());
        }

        long created() {
            return received.stream()
                    .filter(r -> r.getCreated() && !r.getCanceled())
                    .count();
        }

        WatchResponse canceled() {
            return received.stream()
                    .filter(WatchResponse::getCanceled)
                    .findFirst()
                    .orElse(null);
        }

        long events() {
            return received.stream().mapToLong(WatchResponse::getEventsCount).sum();
        }

        @Override
        public void onNext(WatchResponse r) {
            received.add(r);
        }

        @Override
        public void onError(Throwable t) {
            error = t;
        }

        @Override
        public void onCompleted() {}
    }

    private static String prefixEnd(String prefix) {
        return KeyRange.prefixEnd(ByteString.copyFromUtf8(prefix)).toStringUtf8();
    }

    // ---- the tests ---------------------------------------------------------------------

    @Test
    void withoutCredentialsEveryFrontEndAnswersUnauthenticated() throws Exception {
        start(WatchLimits.NONE);
        for (String accept : List.of(JSON, PROTOBUF)) {
            Stream s = watch(ALICE_WATCH, accept, null);
            assertThat(s.status()).isEqualTo(401);
            assertThat(s.response.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"watch-fanout\"");
        }
        Stream list = get("/v1/kv?" + ALICE_WATCH, JSON, null);
        assertThat(list.status()).isEqualTo(401);
        await().until(() -> list.text().contains("\"reason\":\"Unauthorized\""));
        // An event stream gets the refusal as its one ERROR frame, which a page can read.
        Stream sse = watch(ALICE_WATCH, SSE, null);
        assertThat(sse.status()).isEqualTo(200);
        await().until(() -> sse.text().contains("ERROR") && sse.text().contains("401"));
        HttpResponse<String> v3 = gateway("/v3/kv/range", rangeJson(CONFIGMAPS, prefixEnd(CONFIGMAPS)), null);
        assertThat(v3.statusCode()).isEqualTo(401);
        assertThat(v3.body()).contains("\"code\":16");

        assertThatThrownBy(() -> kv(null).range(RangeRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8(CONFIGMAPS))
                        .build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        GrpcWatches w = new GrpcWatches(null, null);
        w.create(CONFIGMAPS, prefixEnd(CONFIGMAPS));
        await().until(() -> w.error != null);
        assertThat(Status.fromThrowable(w.error).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    }

    @Test
    void aliceWatchesAndListsHerPrefixOnEveryFrontEnd() throws Exception {
        start(WatchLimits.NONE);
        Stream json = watch(ALICE_WATCH, JSON, TestAccess.ALICE);
        Stream proto = watch(ALICE_WATCH, PROTOBUF, TestAccess.ALICE);
        Stream sse = watch(ALICE_WATCH, SSE, TestAccess.ALICE);
        GrpcWatches w = new GrpcWatches("authorization", "Bearer " + TestAccess.ALICE);
        w.create(CONFIGMAPS, prefixEnd(CONFIGMAPS));
        HttpResponse<InputStream> v3watch = client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.http.port() + "/v3/watch"))
                        .header("Authorization", "Bearer " + TestAccess.ALICE)
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"create_request\":" + rangeJson(CONFIGMAPS, prefixEnd(CONFIGMAPS)) + "}"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        Stream gatewayWatch = new Stream(v3watch);
        node.keep(gatewayWatch);
        assertThat(List.of(json.status(), proto.status(), sse.status(), v3watch.statusCode()))
                .containsOnly(200);
        await().until(() -> w.created() == 1 && gatewayWatch.text().contains("\"created\":true"));
        await().until(() -> access.access().grants() == 5);
        etcd.put("/registry/configmaps/a", "v").forEach(applier::accept);
        await().until(() -> json.text().contains("ADDED")
                && sse.text().contains("ADDED")
                && proto.text().contains("/registry/configmaps/a")
                && w.events() == 1
                && gatewayWatch.text().contains("\"events\""));

        Stream list = get("/v1/kv?" + ALICE_WATCH, JSON, TestAccess.ALICE);
        assertThat(list.status()).isEqualTo(200);
        await().until(() -> list.text().contains("\"resourceVersion\":\"101\""));
        HttpResponse<String> v3 = gateway(
                "/v3/kv/range",
                rangeJson(CONFIGMAPS, prefixEnd(CONFIGMAPS)).replace("}", ",\"serializable\":true}"),
                TestAccess.ALICE);
        assertThat(v3.statusCode()).as(v3.body()).isEqualTo(200);
        assertThat(v3.body()).contains("\"count\":\"1\"");
        assertThat(kv(TestAccess.ALICE)
                        .range(RangeRequest.newBuilder()
                                .setKey(ByteString.copyFromUtf8(CONFIGMAPS))
                                .setRangeEnd(ByteString.copyFromUtf8(prefixEnd(CONFIGMAPS)))
                                .setSerializable(true)
                                .build())
                        .getCount())
                .isEqualTo(1);
    }

    @Test
    void rangesReachingOutsideTheGrantAreRefusedHoweverSpelled() throws Exception {
        start(WatchLimits.NONE);
        // The prefix above hers; her prefix as a key with rangeEnd \0 (every key after it); a
        // range starting inside and ending outside.
        List<String[]> ranges = List.of(
                new String[] {"/registry/", prefixEnd("/registry/")},
                new String[] {CONFIGMAPS, "\0"},
                new String[] {"/registry/configmaps/a", "/registry/d"});
        List<String> queries = List.of(
                "key=/registry/&prefix=true",
                "key=/registry/configmaps/&rangeEnd=%00",
                "key=/registry/configmaps/a&rangeEnd=/registry/d");
        for (String q : queries) {
            for (String accept : List.of(JSON, PROTOBUF)) {
                assertThat(watch(q, accept, TestAccess.ALICE).status()).as(q).isEqualTo(403);
            }
            Stream sse = watch(q, SSE, TestAccess.ALICE);
            await().until(() -> sse.text().contains("ERROR") && sse.text().contains("Forbidden"));
            Stream list = get("/v1/kv?" + q, JSON, TestAccess.ALICE);
            assertThat(list.status()).as(q).isEqualTo(403);
            await().until(() -> list.text().contains("\"reason\":\"Forbidden\""));
        }
        GrpcWatches w = new GrpcWatches("authorization", "Bearer " + TestAccess.ALICE);
        for (String[] r : ranges) {
            HttpResponse<String> v3 = gateway("/v3/kv/range", rangeJson(r[0], r[1]), TestAccess.ALICE);
            assertThat(v3.statusCode()).isEqualTo(403);
            assertThat(v3.body()).contains("etcdserver: permission denied");
            assertThatThrownBy(() -> kv(TestAccess.ALICE)
                            .range(RangeRequest.newBuilder()
                                    .setKey(ByteString.copyFromUtf8(r[0]))
                                    .setRangeEnd(ByteString.copyFromUtf8(r[1]))
                                    .build()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
            w.create(r[0], r[1]);
        }
        await().until(() -> w.received.size() == 3);
        for (WatchResponse r : w.received) {
            assertThat(r.getCreated()).isTrue();
            assertThat(r.getCanceled()).isTrue();
            assertThat(r.getCancelReason()).isEqualTo(PERMISSION_DENIED);
        }
        HttpResponse<InputStream> v3watch = client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.http.port() + "/v3/watch"))
                        .header("Authorization", "Bearer " + TestAccess.ALICE)
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"create_request\":" + rangeJson(CONFIGMAPS, "\0") + "}"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        Stream gatewayWatch = new Stream(v3watch);
        node.keep(gatewayWatch);
        await().until(() -> gatewayWatch.text().contains("\"canceled\":true")
                && gatewayWatch.text().contains("etcdserver: permission denied"));
        assertThat(access.access().grants()).isZero();
    }

    @Test
    void aRewrittenPolicyEndsAlicesWatchesAndNotBobs() throws Exception {
        start(WatchLimits.NONE);
        Stream json = watch(ALICE_WATCH, JSON, TestAccess.ALICE);
        Stream sse = watch(ALICE_WATCH, SSE, TestAccess.ALICE);
        Stream bob = watch("key=/registry/&prefix=true", JSON, TestAccess.BOB);
        GrpcWatches w = new GrpcWatches("authorization", "Bearer " + TestAccess.ALICE);
        w.create(CONFIGMAPS, prefixEnd(CONFIGMAPS));
        await().until(() -> access.access().grants() == 4);

        access.replacePolicy(TestAccess.rule("bob", "/registry/"));

        await().until(() -> json.text().contains("\"type\":\"ERROR\"")
                && json.text().contains("\"code\":403")
                && sse.text().contains("Forbidden")
                && w.canceled() != null);
        assertThat(w.canceled().getCancelReason()).startsWith(PERMISSION_DENIED + ": ");
        etcd.put("/registry/configmaps/b", "v").forEach(applier::accept);
        await().until(() -> bob.text().contains("ADDED"));
        assertThat(json.text()).doesNotContain("ADDED");
        await().until(() -> access.access().grants() == 1);
    }

    @Test
    void theWatchLimitsRefuseOneIdentityAndTheFullNodeWhileOthersAreServed() throws Exception {
        start(new WatchLimits(1001, 1000, 0, 0));
        // The cheapest 1,000 watches: one etcd Watch stream.
        GrpcWatches alice = new GrpcWatches("token", TestAccess.ALICE);
        for (int i = 0; i < 1000; i++) {
            alice.create(CONFIGMAPS, prefixEnd(CONFIGMAPS));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> alice.created() == 1000);

        Stream refused = watch(ALICE_WATCH, JSON, TestAccess.ALICE);
        assertThat(refused.status()).isEqualTo(429);
        assertThat(refused.response.headers().firstValue("Retry-After")).isPresent();
        await().until(() -> refused.text().contains("TooManyRequests"));
        alice.create(CONFIGMAPS, prefixEnd(CONFIGMAPS));
        await().until(() -> alice.canceled() != null);
        assertThat(alice.canceled().getCreated()).isTrue();
        assertThat(alice.canceled().getCancelReason())
                .startsWith("etcdserver: too many watches: ")
                .contains("--max-watchers-per-identity")
                .contains("retry in ");

        // bob is served: the node's 1,001st.
        assertThat(watch("key=/registry/&prefix=true", JSON, TestAccess.BOB).status())
                .isEqualTo(200);
        // Now the node is full, for bob too.
        Stream full = watch("key=/registry/&prefix=true", JSON, TestAccess.BOB);
        assertThat(full.status()).isEqualTo(429);
        assertThat(full.response.headers().firstValue("Retry-After")).hasValue("1");
        await().until(() -> full.text().contains("--max-watchers"));
    }

    @Test
    void theAuditLogHasAWatchsStartEndAndARefusal() throws Exception {
        start(WatchLimits.NONE);
        Logger audit = (Logger) LoggerFactory.getLogger("watchfanout.audit");
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        audit.addAppender(lines);
        try {
            Stream s = watch(ALICE_WATCH, JSON, TestAccess.ALICE);
            etcd.put("/registry/configmaps/a", "v").forEach(applier::accept);
            await().until(() -> s.text().contains("ADDED"));
            s.close();
            await().until(() -> access.access().grants() == 0);
            assertThat(watch("key=/registry/&prefix=true", JSON, TestAccess.ALICE)
                            .status())
                    .isEqualTo(403);
            List<String> messages =
                    lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
            assertThat(messages)
                    .anySatisfy(m -> assertThat(m)
                            .contains("\"audit\":\"watch-start\"", "\"identity\":\"alice\"", "\"api\":\"http-json\"")
                            .contains("\"range\":"))
                    .anySatisfy(m -> assertThat(m)
                            .contains(
                                    "\"audit\":\"watch-end\"", "\"identity\":\"alice\"", "\"frames\":", "\"reason\":"))
                    .anySatisfy(m -> assertThat(m).contains("\"audit\":\"denied\"", "\"identity\":\"alice\""));
        } finally {
            audit.detachAppender(lines);
        }
    }

    /** About a hundred malformed {@code Authorization} headers: prefixes crossed with bad tokens, and some whole values. */
    private static List<String> malformedAuthorizations() {
        List<String> out = new ArrayList<>(List.of(
                "",
                " ",
                "Bearer",
                "Bearer ",
                "Bearer  ",
                "bearer",
                "Basic YWxpY2U6c2VjcmV0",
                "Basic xxx",
                "Digest username=\"alice\"",
                "Negotiate abc",
                "Token alice-secret",
                "Bearer=alice-secret",
                "Bearer a b",
                "Bearer %00",
                "Bearer alice-secret, Bearer bob-secret",
                "Bearer alice-secretX",
                "Bearer ALICE-SECRET",
                "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
                "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6MX0.c2lnbmF0dXJl",
                "Bearer a.b.c",
                "Bearer ....",
                "Bearer \u00e9t\u00e9",
                "Bearer \u00ff\u00fe",
                "Bearer \u0001",
                "Bearer \u007f",
                "Bearer a\tb",
                "\u0007",
                "Bearer " + "x".repeat(100 * 1024)));
        List<String> prefixes = List.of("Bearer ", "Basic ", "Bearer\t", "Bearerx ", "");
        List<String> tokens = List.of(
                "\"alice-secret\"",
                "'alice-secret'",
                "alice secret",
                "null",
                "%20",
                "\u00e9",
                "\u0000",
                "x".repeat(8000),
                "a\\b",
                "=",
                "eyJ.eyJ.sig",
                "\u00c3\u00a9",
                "\u0008\u0008",
                "alice-secret\u00a0",
                "{}");
        for (String p : prefixes) {
            for (String t : tokens) {
                out.add(p + t);
            }
        }
        return out;
    }

    private String statusLine(String target, String headers) throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", node.http.port())) {
            socket.setSoTimeout(30_000);
            java.io.OutputStream out = socket.getOutputStream();
            out.write(("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + "\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0 && c != '\r') {
                line.append((char) c);
            }
            return line.toString();
        }
    }

    @Test
    void malformedCredentialsAreRefusedWith4xxAndTheNodeGoesOnServing() throws Exception {
        start(WatchLimits.NONE);
        List<String> corpus = malformedAuthorizations();
        assertThat(corpus).hasSizeGreaterThanOrEqualTo(100);
        int i = 0;
        for (String value : corpus) {
            String target = (i++ % 2 == 0 ? "/v1/watch?" : "/v1/kv?") + ALICE_WATCH;
            assertThat(statusLine(target, "Authorization: " + value + "\r\n"))
                    .as("Authorization: %s", value.length() > 60 ? value.substring(0, 60) + "..." : value)
                    .matches("HTTP/1\\.1 (400|401|431) .*");
        }
        // Two headers, and a flood of them.
        assertThat(statusLine(
                        "/v1/watch?" + ALICE_WATCH,
                        "Authorization: Bearer " + TestAccess.ALICE + "\r\nAuthorization: Bearer " + TestAccess.BOB
                                + "\r\n"))
                .startsWith("HTTP/1.1 401 ");
        assertThat(statusLine("/v1/watch?" + ALICE_WATCH, "Authorization: Bearer x\r\n".repeat(500)))
                .matches("HTTP/1\\.1 (400|401|431) .*");

        List<String[]> metadata = new ArrayList<>();
        for (String v : List.of(
                "",
                "Bearer",
                "Bearer ",
                "Bearer  ",
                "Basic xxx",
                "Bearer a b",
                "Bearer %00",
                "a b",
                "nope",
                "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
                "Bearer alice-secretX",
                "{}",
                "x".repeat(8000))) {
            metadata.add(new String[] {"authorization", v});
            metadata.add(new String[] {"token", v});
        }
        for (String[] md : metadata) {
            KVGrpc.KVBlockingStub stub =
                    as(KVGrpc.newBlockingStub(node.channel).withDeadlineAfter(30, TimeUnit.SECONDS), md[0], md[1]);
            assertThatThrownBy(() -> stub.range(RangeRequest.newBuilder()
                            .setKey(ByteString.copyFromUtf8(CONFIGMAPS))
                            .setSerializable(true)
                            .build()))
                    .as("%s: %s", md[0], md[1].length() > 60 ? md[1].substring(0, 60) + "..." : md[1])
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        }
        // Metadata above the API's bound is grpc's to refuse, before any interceptor: never served.
        KVGrpc.KVBlockingStub huge = as(
                KVGrpc.newBlockingStub(node.channel).withDeadlineAfter(30, TimeUnit.SECONDS),
                "authorization",
                "Bearer " + "x".repeat(32 * 1024));
        assertThatThrownBy(() -> huge.range(RangeRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8(CONFIGMAPS))
                        .build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isNotEqualTo(Status.Code.OK));

        Stream s = watch(ALICE_WATCH, JSON, TestAccess.ALICE);
        assertThat(s.status()).isEqualTo(200);
        etcd.put("/registry/configmaps/after", "v").forEach(applier::accept);
        await().until(() -> s.text().contains("ADDED"));
    }
}
