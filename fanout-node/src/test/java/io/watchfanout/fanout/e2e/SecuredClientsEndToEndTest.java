package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.auth.Permission;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.etcd.jetcd.options.WatchOption;
import io.grpc.Status;
import io.watchfanout.fanout.testing.NodeApps;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.testkit.Closer;
import io.watchfanout.testkit.Curl;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.StackLauncher;
import io.watchfanout.testkit.TlsClientContext;
import io.watchfanout.testkit.WatchClient;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tier against a secured etcd and Kafka (README.md, "Connecting to a secured etcd and Kafka"),
 * and clients nobody here wrote, as real processes, against one node with TLS, authentication and
 * a policy file (README.md, "TLS" and "Security").
 *
 * <p>The tier: the ingester and the node reach etcd and Kafka with {@code --etcd-*} and
 * {@code --kafka-config}; a watch through the node sees every write under {@code /secured/}
 * exactly once in revision order, a consistent list (the node's own authenticated revision probe)
 * is what etcd holds, and the node's etcd API forwards a client's own token, never its own.
 *
 * <p>The clients: etcdctl with a client certificate and with an etcd user, curl with a bearer
 * token, jetcd and Node's {@code etcd3} with an etcd user. The policy lets {@code alice} (a
 * token), {@code reader} (an etcd user) and {@code carol} (a client certificate's common name)
 * watch and read {@code /registry/configmaps/}; each client reads and watches that prefix and is
 * refused every range reaching outside it however it is spelled.
 *
 * <p>One stack for the class: etcd serving only https with client certificates and authentication
 * (root, the ingester's user, and {@code reader} with etcd's own READ on the prefix), Kafka taking
 * clients only on SASL_SSL, the ingester, and a node without {@code --anonymous} taking
 * certificates, a token file and etcd's users, which asks for client certificates without
 * requiring one so that token and password clients get through the handshake.
 */
class SecuredClientsEndToEndTest {
    private static final String TOPIC_PREFIX = "secured-clients";
    private static final String CONFIGMAPS = "/registry/configmaps/";
    /** The tier's keys: apart from the clients' so that its counts and its list are its own. */
    private static final String KEYS = "/secured/";

    private static final int KEY_COUNT = 30;
    private static final String ROOT_PASSWORD = "root-pw";
    private static final String READER_PASSWORD = "reader-pw";
    private static final String ALICE_TOKEN = "alice-5d0c6b7e-9f2a-4c1e-8a3b-token";
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Ranges reaching outside the grant, as etcdctl spells them: a wider prefix, from a key on, a wider end. */
    private static final List<List<String>> OUTSIDE = List.of(
            List.of("get", "--prefix", "/registry/"),
            List.of("get", CONFIGMAPS, "--from-key"),
            List.of("get", CONFIGMAPS + "a", "/registry/d"));

    @TempDir
    static Path dir;

    private static final Closer CLOSER = new Closer();
    private static Pki pki;
    private static Pki.Issued carol;
    private static Pki.Issued otherCaClient;
    private static Client root;
    private static KV etcdKv;
    /** Trusts the node's certificate. */
    private static HttpClient https;

    private static int httpPort;
    private static int apiPort;
    /** etcd's revision before the test's first write. */
    private static long startRevision;

    @BeforeAll
    static void startStack() throws Exception {
        pki = Pki.create(dir.resolve("pki"), "ca");
        carol = pki.client("carol", "carol");
        otherCaClient = Pki.create(dir.resolve("other-pki"), "other-ca").client("mallory", "mallory");
        EtcdServer etcd = CLOSER.keep(EtcdServer.builder()
                .tls(pki)
                .rootPassword(ROOT_PASSWORD)
                .user("ingester", "ingester-pw", Permission.Type.READ, "")
                .user("reader", READER_PASSWORD, Permission.Type.READ, CONFIGMAPS)
                .build()
                .start());
        KafkaBroker kafka = CLOSER.keep(KafkaBroker.builder()
                .saslSsl(pki)
                .saslUser("ingester", "ingester-kafka-pw")
                .saslUser("fanout", "fanout-kafka-pw")
                .build()
                .start());
        root = CLOSER.keep(etcd.clientBuilder()
                .user(bs("root"))
                .password(bs(ROOT_PASSWORD))
                .build());
        etcdKv = root.getKVClient();

        List<String> etcdTls = List.of(
                "--etcd-cacert", etcd.caCert().toString(),
                "--etcd-cert", etcd.clientCert().cert().toString(),
                "--etcd-key", etcd.clientCert().key().toString());
        List<String> ingesterFlags = new ArrayList<>(etcdTls);
        ingesterFlags.addAll(List.of(
                "--etcd-user",
                "ingester",
                "--etcd-password-file",
                write("ingester.pw", "ingester-pw"),
                "--kafka-config",
                kafkaConfig(kafka, "ingester")));
        CLOSER.keep(Stack.ingester(
                etcd.clientUrl(), kafka.saslSslBootstrapServers(), TOPIC_PREFIX, ingesterFlags.toArray(new String[0])));
        // Written once the ingester watches, so that the events topic holds them for watches from before.
        startRevision = currentRevision();
        put(CONFIGMAPS + "a", "1");
        put(CONFIGMAPS + "b", "2");
        put("/registry/secrets/s", "hidden");

        https = HttpClient.newBuilder()
                .sslContext(TlsClientContext.of(pki.caCert(), null))
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        Pki.Issued server = pki.server("node", "node");
        httpPort = FreePorts.pick();
        apiPort = FreePorts.pick();
        JavaProcess node = CLOSER.keep(StackLauncher.on(null, kafka.saslSslBootstrapServers(), TOPIC_PREFIX)
                .node(
                        JavaProcess.builder("io.watchfanout.fanout.FanoutNodeMain")
                                .name("secured-clients-node")
                                .maxHeap("384m"),
                        httpPort,
                        "secured-clients-node",
                        false)
                .args(
                        "--tls-cert-file",
                        server.cert().toString(),
                        "--tls-key-file",
                        server.key().toString())
                .args("--client-ca-file", pki.caCert().toString(), "--client-cert-auth")
                .args("--token-auth-file", write("tokens.csv", ALICE_TOKEN + ",alice,1001\n"))
                .args("--etcd-user-auth", "--etcd-api-port", Integer.toString(apiPort))
                .args("--etcd-endpoints", etcd.clientUrl())
                .args(etcdTls)
                .args("--etcd-user", "root", "--etcd-password-file", write("root.pw", ROOT_PASSWORD))
                .args("--authz", "file:" + write("policy.json", policy()))
                .args("--kafka-config", kafkaConfig(kafka, "fanout"))
                .start());
        awaitReady(node);
    }

    @AfterAll
    static void stopStack() throws Exception {
        CLOSER.close();
    }

    // ---- the tier ----------------------------------------------------------------------

    @Test
    void everyWriteReachesTheWatchOnceAndAConsistentListIsWhatEtcdHolds() throws Exception {
        KV kv = etcdKv;
        long start = kv.get(bs(KEYS)).get(30, TimeUnit.SECONDS).getHeader().getRevision();
        try (WatchClient watch =
                new WatchClient("secured", KEYS, "prefix", true).through(https, "Bearer " + ALICE_TOKEN)) {
            assertThat(watch.connect(url(""), start)).isEqualTo(200);

            long last = 0;
            for (int i = 0; i < KEY_COUNT; i++) {
                last = put(kv, KEYS + "k" + i, "v" + i);
            }
            for (int i = 0; i < KEY_COUNT; i += 3) {
                last = put(kv, KEYS + "k" + i, "again" + i);
            }
            for (int i = 1; i < KEY_COUNT; i += 5) {
                last = kv.delete(bs(KEYS + "k" + i))
                        .get(30, TimeUnit.SECONDS)
                        .getHeader()
                        .getRevision();
            }
            // Through the node's etcd API: the client's own token is forwarded and the put is root's.
            try (Client viaNode =
                    etcdApiClient().user(bs("root")).password(bs(ROOT_PASSWORD)).build()) {
                last = put(viaNode.getKVClient(), KEYS + "forwarded", "by root");
            }
            // Without a token of its own, a call is not the node's user (root): it is refused.
            try (Client anonymous = etcdApiClient().build()) {
                assertThatThrownBy(() -> put(anonymous.getKVClient(), KEYS + "anonymous", "x"))
                        .isInstanceOf(ExecutionException.class);
            }

            // A consistent list, asked right after the last write: the node probes etcd's revision.
            KeyValueList list = listSecured();
            assertThat(list.getResourceVersion()).isGreaterThanOrEqualTo(last);
            assertThat(list.getKvsList()).isEqualTo(etcdHolds(kv));
            assertThat(list.getKvsCount()).isEqualTo(KEY_COUNT - KEY_COUNT / 5 + 1);

            long end = last;
            await().atMost(Duration.ofSeconds(60)).until(() -> watch.lastResourceVersion() >= end);
            List<Expected.Frame> expected = Expected.directWatch(
                    root,
                    ByteString.copyFromUtf8(KEYS),
                    ByteString.copyFrom(OptionsUtil.prefixEndOf(bs(KEYS)).getBytes()),
                    start,
                    end);
            assertThat(expected).hasSize(KEY_COUNT + KEY_COUNT / 3 + KEY_COUNT / 5 + 1);
            assertThat(Expected.received(watch.frames())).isEqualTo(expected);
        }
    }

    private static ClientBuilder etcdApiClient() throws SSLException {
        return Client.builder()
                .endpoints("https://127.0.0.1:" + apiPort)
                .sslContext(ssl -> ssl.trustManager(pki.caCert().toFile()));
    }

    private static long put(KV kv, String key, String value) throws Exception {
        return kv.put(bs(key), bs(value)).get(30, TimeUnit.SECONDS).getHeader().getRevision();
    }

    /** A consistent list of {@link #KEYS} through the node, as {@code alice}. */
    private static KeyValueList listSecured() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(
                        url("/v1/kv?key=" + URLEncoder.encode(KEYS, StandardCharsets.UTF_8) + "&prefix=true")))
                .header("Authorization", "Bearer " + ALICE_TOKEN)
                .timeout(WAIT)
                .build();
        HttpResponse<String> r = https.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        KeyValueList.Builder b = KeyValueList.newBuilder();
        JsonFormat.parser().merge(r.body(), b);
        return b.build();
    }

    private static List<KeyValue> etcdHolds(KV kv) throws Exception {
        List<KeyValue> out = new ArrayList<>();
        for (io.etcd.jetcd.KeyValue k : kv.get(
                        bs(KEYS), GetOption.builder().isPrefix(true).build())
                .get(30, TimeUnit.SECONDS)
                .getKvs()) {
            out.add(Expected.kv(k));
        }
        return out;
    }

    // ---- etcdctl -----------------------------------------------------------------------

    @Test
    void etcdctlWithAClientCertificateReadsAndWatchesTheGrantAndIsRefusedOutsideIt() throws Exception {
        List<String> credentials = List.of(
                "--cacert", pki.caCert().toString(),
                "--cert", carol.cert().toString(),
                "--key", carol.key().toString());
        etcdctlIsServedTheGrantOnly(credentials, "seen-by-carol");
    }

    @Test
    void etcdctlWithAnEtcdUserAuthenticatesThroughTheNodeAndIsServedTheGrantOnly() throws Exception {
        // No client certificate: the node asks for one without requiring it.
        List<String> credentials = List.of("--cacert", pki.caCert().toString(), "--user", "reader:" + READER_PASSWORD);
        etcdctlIsServedTheGrantOnly(credentials, "seen-by-reader");

        Etcdctl wrong =
                etcdctl(List.of("--cacert", pki.caCert().toString(), "--user", "reader:wrong"), "get", CONFIGMAPS);
        assertThat(wrong.exit()).as(wrong.out()).isNotZero();
        assertThat(wrong.out()).contains("authentication failed");
    }

    private static void etcdctlIsServedTheGrantOnly(List<String> credentials, String newKey) throws Exception {
        assertThat(etcdctl(credentials, "get", "--prefix", CONFIGMAPS, "--keys-only")
                        .ok()
                        .lines()
                        .filter(l -> !l.isBlank()))
                .contains(CONFIGMAPS + "a", CONFIGMAPS + "b")
                .allMatch(k -> k.startsWith(CONFIGMAPS));
        for (List<String> outside : OUTSIDE) {
            Etcdctl refused = etcdctl(credentials, outside.toArray(new String[0]));
            assertThat(refused.exit()).as("%s: %s", outside, refused.out()).isNotZero();
            assertThat(refused.out()).as("%s", outside).contains("etcdserver: permission denied");
        }

        Path watched = dir.resolve(newKey + "-watch.txt");
        Process watch = startEtcdctl(
                watched, credentials, "watch", "--prefix", CONFIGMAPS, "--rev", Long.toString(currentRevision() + 1));
        Path denied = dir.resolve(newKey + "-denied.txt");
        Process deniedWatch = startEtcdctl(denied, credentials, "watch", "--prefix", "/registry/");
        try {
            put(CONFIGMAPS + newKey, "v");
            await().atMost(WAIT).until(() -> Files.readString(watched).contains(CONFIGMAPS + newKey));
            // etcd 3.5's answer to a denied watch: created, then canceled; etcdctl then exits.
            assertThat(deniedWatch.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(Files.readString(denied)).contains("permission denied");
            assertThat(watch.isAlive()).isTrue();
        } finally {
            stop(watch);
            stop(deniedWatch);
        }
        assertThat(Files.readString(watched)).doesNotContain("/registry/secrets/");
    }

    /** An etcdctl run: its exit status and everything it printed (stdout and stderr). */
    private record Etcdctl(int exit, String out) {
        String ok() {
            assertThat(exit).as(out).isZero();
            return out;
        }
    }

    private static Etcdctl etcdctl(List<String> credentials, String... args) throws Exception {
        Path out = Files.createTempFile(dir, "etcdctl", ".txt");
        Process p = startEtcdctl(out, credentials, args);
        if (!p.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            stop(p);
            throw new AssertionError("etcdctl " + List.of(args) + " did not end: " + Files.readString(out));
        }
        return new Etcdctl(p.exitValue(), Files.readString(out).strip());
    }

    private static Process startEtcdctl(Path out, List<String> credentials, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("etcdctl", "--endpoints=https://127.0.0.1:" + apiPort));
        command.addAll(credentials);
        command.addAll(List.of(args));
        ProcessBuilder pb =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("ETCDCTL_API", "3");
        return pb.start();
    }

    private static void stop(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
        }
    }

    // ---- curl --------------------------------------------------------------------------

    @Test
    void curlWithoutCredentialsIsAskedForThem() {
        for (String path : List.of("/v1/kv?" + configmaps(), "/v1/watch?" + configmaps())) {
            Answer a = curl(path);
            assertThat(a.status()).as(path).isEqualTo(401);
            assertThat(a.head()).as(path).containsIgnoringCase("WWW-Authenticate: Bearer realm=\"watch-fanout\"");
            assertThat(a.body()).as(path).contains("\"code\":401", "\"reason\":\"Unauthorized\"");
        }
        assertThat(curl("/readyz").status()).isEqualTo(200);
    }

    @Test
    void curlWithABearerTokenListsAndWatchesTheGrantInEveryEncoding() {
        Answer list = curl("/v1/kv?" + configmaps(), "-H", bearer());
        assertThat(list.status()).as(list.body()).isEqualTo(200);
        assertThat(list.body()).contains(base64(CONFIGMAPS + "a"), base64(CONFIGMAPS + "b"));
        assertThat(list.body()).doesNotContain(base64("/registry/secrets/s"));

        // From before the test's writes, ended by the node after a second with a final bookmark.
        String watch = "/v1/watch?" + configmaps() + "&resourceVersion=" + startRevision
                + "&allowWatchBookmarks=true&timeoutSeconds=1";
        Answer json = curl(watch, "-H", bearer());
        assertThat(json.status()).as(json.body()).isEqualTo(200);
        assertThat(json.body()).contains("\"type\":\"ADDED\"", base64(CONFIGMAPS + "a"), "\"type\":\"BOOKMARK\"");
        Answer proto = curl(watch, "-H", bearer(), "-H", "Accept: application/x-protobuf");
        assertThat(proto.status()).isEqualTo(200);
        assertThat(proto.head()).containsIgnoringCase("Content-Type: application/x-protobuf");
        // Keys are raw bytes in protobuf frames.
        assertThat(proto.body()).contains(CONFIGMAPS + "a", CONFIGMAPS + "b");
        Answer sse = curl(watch, "-H", bearer(), "-H", "Accept: text/event-stream");
        assertThat(sse.status()).isEqualTo(200);
        assertThat(sse.body()).contains("event: ADDED", "event: BOOKMARK", base64(CONFIGMAPS + "a"));

        // The client certificate's common name is an identity too.
        Answer byCertificate = curl(
                "/v1/kv?" + configmaps(),
                "--cert",
                carol.cert().toString(),
                "--key",
                carol.key().toString());
        assertThat(byCertificate.status()).as(byCertificate.body()).isEqualTo(200);
        assertThat(byCertificate.body()).contains(base64(CONFIGMAPS + "a"));
    }

    @Test
    void curlWithABearerTokenIsForbiddenRangesOutsideTheGrant() {
        for (String query : List.of("key=/registry/&prefix=true", "key=" + CONFIGMAPS + "&rangeEnd=%00")) {
            for (String path : List.of("/v1/watch?", "/v1/kv?")) {
                Answer a = curl(path + query, "-H", bearer());
                assertThat(a.status()).as(path + query).isEqualTo(403);
                assertThat(a.body()).as(path + query).contains("\"code\":403", "\"reason\":\"Forbidden\"");
            }
            // An event stream gets its refusal as an ERROR frame, which an EventSource can read.
            Answer sse = curl("/v1/watch?" + query, "-H", bearer(), "-H", "Accept: text/event-stream");
            assertThat(sse.status()).as(query).isEqualTo(200);
            assertThat(sse.body()).as(query).contains("event: ERROR", "\"code\":403");
        }
    }

    @Test
    void curlThroughTheJsonGatewayIsServedTheGrantOnly() {
        Answer inside = curl(
                "/v3/kv/range", "-H", bearer(), "-X", "POST", "-d", rangeJson(CONFIGMAPS, "/registry/configmaps0"));
        assertThat(inside.status()).as(inside.body()).isEqualTo(200);
        assertThat(inside.body()).contains(base64(CONFIGMAPS + "a"), base64(CONFIGMAPS + "b"));
        Answer outside =
                curl("/v3/kv/range", "-H", bearer(), "-X", "POST", "-d", rangeJson("/registry/", "/registry0"));
        assertThat(outside.status()).as(outside.body()).isEqualTo(403);
        assertThat(outside.body()).doesNotContain(base64("/registry/secrets/s"));
        Answer anonymous = curl("/v3/kv/range", "-X", "POST", "-d", rangeJson(CONFIGMAPS, "/registry/configmaps0"));
        assertThat(anonymous.status()).as(anonymous.body()).isEqualTo(401);
    }

    @Test
    void curlWithACertificateOfAnotherCaFailsInTheHandshake() {
        Curl refused = Curl.tls(pki.caCert(), otherCaClient, url("/readyz"));
        assertThat(refused.exit()).isNotZero();
        assertThat(refused.out()).isEmpty();
    }

    /** A curl answer: {@code -i}'s status line and headers, and the body. */
    private record Answer(int status, String head, String body) {}

    private static Answer curl(String path, String... args) {
        List<String> command =
                new ArrayList<>(List.of("-i", "--cacert", pki.caCert().toString()));
        command.addAll(List.of(args));
        command.add(url(path));
        Curl c = Curl.run(command.toArray(new String[0]));
        assertThat(c.exit()).as("curl %s: %s", command, c.out()).isZero();
        int split = c.out().indexOf("\r\n\r\n");
        String head = c.out().substring(0, split);
        String status = head.lines().findFirst().orElseThrow().split(" ")[1];
        return new Answer(Integer.parseInt(status), head, c.out().substring(split + 4));
    }

    private static String url(String path) {
        return "https://127.0.0.1:" + httpPort + path;
    }

    private static String configmaps() {
        return "key=" + CONFIGMAPS + "&prefix=true";
    }

    private static String bearer() {
        return "Authorization: Bearer " + ALICE_TOKEN;
    }

    private static String rangeJson(String key, String rangeEnd) {
        return "{\"key\":\"" + base64(key) + "\",\"range_end\":\"" + base64(rangeEnd) + "\"}";
    }

    private static String base64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    // ---- jetcd and Node's etcd3 --------------------------------------------------------

    @Test
    void jetcdAsAnEtcdUserWatchesTheGrantAndIsDeniedOutsideIt() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Client reader = Client.builder()
                .endpoints("https://127.0.0.1:" + apiPort)
                .user(bs("reader"))
                .password(bs(READER_PASSWORD))
                .sslContext(ssl -> ssl.trustManager(pki.caCert().toFile()))
                .build()) {
            WatchOption fromNow = WatchOption.builder()
                    .isPrefix(true)
                    .withRevision(currentRevision() + 1)
                    .build();
            Watch.Watcher watcher = reader.getWatchClient()
                    .watch(
                            bs(CONFIGMAPS),
                            fromNow,
                            response -> response.getEvents()
                                    .forEach(e ->
                                            seen.add(e.getKeyValue().getKey().toString(StandardCharsets.UTF_8))));
            put(CONFIGMAPS + "seen-by-jetcd", "v");
            await().atMost(WAIT).until(() -> seen.contains(CONFIGMAPS + "seen-by-jetcd"));
            assertThat(reader.getKVClient()
                            .get(
                                    bs(CONFIGMAPS),
                                    GetOption.builder().isPrefix(true).build())
                            .get(30, TimeUnit.SECONDS)
                            .getCount())
                    .isGreaterThanOrEqualTo(3);
            assertThatThrownBy(() -> reader.getKVClient()
                            .get(
                                    bs("/registry/"),
                                    GetOption.builder().isPrefix(true).build())
                            .get(30, TimeUnit.SECONDS))
                    .satisfies(e ->
                            assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
            watcher.close();
        }
    }

    @Test
    void nodesEtcd3PackageAsAnEtcdUserReadsTheGrantAndIsDeniedOutsideIt() throws Exception {
        Path app = NodeApps.install("etcd3-client", "etcd3", List.of("package.json", "package-lock.json", "get.js"));
        Process node = new ProcessBuilder(
                        "node",
                        "get.js",
                        "https://127.0.0.1:" + apiPort,
                        pki.caCert().toString(),
                        "reader",
                        READER_PASSWORD,
                        CONFIGMAPS,
                        "/registry/")
                .directory(app.toFile())
                // Node's warnings (an IP address as TLS server name) go to stderr.
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(node.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).as(out).isTrue();
        List<String> lines = out.lines().toList();
        assertThat(lines).as(out).hasSize(2);
        assertThat(lines.get(0)).contains("\"keys\":[", "\"" + CONFIGMAPS + "a\"", "\"" + CONFIGMAPS + "b\"");
        assertThat(lines.get(1)).contains("\"error\":\"EtcdPermissionDeniedError\"");
    }

    // ---- the stack ---------------------------------------------------------------------

    private static String policy() {
        return "{\"rules\": [{\"subjects\": [\"alice\", \"reader\", \"carol\"], \"verbs\": [\"watch\", \"read\"], "
                + "\"prefixes\": [\"" + CONFIGMAPS + "\"]},"
                + " {\"subjects\": [\"alice\", \"carol\"], \"verbs\": [\"watch\", \"read\"], \"prefixes\": [\"" + KEYS
                + "\"]}, {\"subjects\": [\"root\"], \"verbs\": [\"write\"], \"prefixes\": [\"" + KEYS + "\"]}]}";
    }

    /** Polls the node's {@code /readyz} over TLS (the testkit's poll speaks plain HTTP) until it answers 200. */
    private static void awaitReady(JavaProcess node) {
        HttpRequest readyz = HttpRequest.newBuilder(URI.create(url("/readyz")))
                .timeout(Duration.ofSeconds(2))
                .build();
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    if (!node.isAlive()) {
                        throw new AssertionError("the node exited; its log ends with:\n" + node.logTail(30));
                    }
                    try {
                        return https.send(readyz, HttpResponse.BodyHandlers.discarding())
                                        .statusCode()
                                == 200;
                    } catch (IOException e) {
                        return false;
                    }
                });
    }

    private static long currentRevision() throws Exception {
        return etcdKv.get(bs(CONFIGMAPS)).get(30, TimeUnit.SECONDS).getHeader().getRevision();
    }

    private static void put(String key, String value) throws Exception {
        put(etcdKv, key, value);
    }

    private static String kafkaConfig(KafkaBroker kafka, String user) {
        return kafka.writeSaslClientConfig(dir.resolve(user + "-kafka.properties"), user)
                .toString();
    }

    private static String write(String file, String text) throws IOException {
        return Files.writeString(dir.resolve(file), text).toString();
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
