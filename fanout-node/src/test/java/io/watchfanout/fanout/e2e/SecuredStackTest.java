package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.auth.Permission;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.testkit.Closer;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.WatchClient;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tier against a secured etcd and Kafka (README.md, "Connecting to a secured etcd and
 * Kafka"): etcd serves only https, requires client certificates and has authentication on; Kafka
 * takes clients only on SASL_SSL. The ingester and a node reach both with {@code --etcd-*} and
 * {@code --kafka-config}; a watch through the node sees every write exactly once in revision
 * order, a consistent list (the node's own authenticated revision probe) is what etcd holds, and
 * the node's etcd API forwards a client's own token, never its own.
 */
class SecuredStackTest {
    private static final String KEYS = "/secured/";
    private static final int KEY_COUNT = 30;

    @TempDir
    Path dir;

    private final Closer closer = new Closer();

    @AfterEach
    void tearDown() throws Exception {
        closer.close();
    }

    @Test
    void everyWriteReachesTheWatchOnceAndAConsistentListIsWhatEtcdHolds() throws Exception {
        Pki pki = Pki.create(dir.resolve("pki"), "ca");
        EtcdServer etcd = closer.keep(EtcdServer.builder()
                .tls(pki)
                .rootPassword("root-pw")
                // The ingester watches the whole keyspace (dense revisions), whatever its --key-prefix.
                .user("ingester", "ingester-pw", Permission.Type.READ, "")
                // The node's own calls: the revision probe counts the key \0.
                .user("fanout", "fanout-pw", Permission.Type.READ, "")
                .build()
                .start());
        KafkaBroker kafka = closer.keep(KafkaBroker.builder()
                .saslSsl(pki)
                .saslUser("ingester", "ingester-kafka-pw")
                .saslUser("fanout", "fanout-kafka-pw")
                .build()
                .start());
        Client root = closer.keep(
                etcd.clientBuilder().user(bs("root")).password(bs("root-pw")).build());
        KV kv = root.getKVClient();
        String[] etcdTls = {
            "--etcd-cacert", etcd.caCert().toString(),
            "--etcd-cert", etcd.clientCert().cert().toString(),
            "--etcd-key", etcd.clientCert().key().toString()
        };
        String topicPrefix = "secured";
        closer.keep(Stack.ingester(
                etcd.clientUrl(),
                kafka.saslSslBootstrapServers(),
                topicPrefix,
                concat(
                        etcdTls,
                        "--key-prefix",
                        KEYS,
                        "--etcd-user",
                        "ingester",
                        "--etcd-password-file",
                        password("ingester", "ingester-pw\n"),
                        "--kafka-config",
                        kafkaConfig(kafka, "ingester"))));
        int apiPort = FreePorts.pick();
        Stack.Node node = closer.keep(Stack.etcdApiNode(
                "secured-node",
                kafka.saslSslBootstrapServers(),
                topicPrefix,
                apiPort,
                etcd.clientUrl(),
                concat(
                        etcdTls,
                        "--etcd-user",
                        "fanout",
                        "--etcd-password-file",
                        password("fanout", "fanout-pw\n"),
                        "--kafka-config",
                        kafkaConfig(kafka, "fanout"))));

        long start = kv.get(bs(KEYS)).get(30, TimeUnit.SECONDS).getHeader().getRevision();
        WatchClient watch = closer.keep(new WatchClient("secured", KEYS, "prefix", true));
        assertThat(watch.connect(node.url(), start)).isEqualTo(200);

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
        try (Client viaNode = Client.builder()
                .endpoints("http://127.0.0.1:" + apiPort)
                .user(bs("root"))
                .password(bs("root-pw"))
                .build()) {
            last = put(viaNode.getKVClient(), KEYS + "forwarded", "by root");
        }
        // Without a token of its own, a forwarded call is not the node's user: etcd refuses it.
        try (Client anonymous =
                Client.builder().endpoints("http://127.0.0.1:" + apiPort).build()) {
            assertThatThrownBy(() -> put(anonymous.getKVClient(), KEYS + "anonymous", "x"))
                    .isInstanceOf(ExecutionException.class);
        }

        // A consistent list, asked right after the last write: the node probes etcd's revision.
        KeyValueList list = list(node);
        assertThat(list.getResourceVersion()).isGreaterThanOrEqualTo(last);
        assertThat(list.getKvsList()).isEqualTo(etcdHolds(kv));
        assertThat(list.getKvsCount()).isEqualTo(KEY_COUNT - KEY_COUNT / 5 + 1);

        long end = last;
        await().atMost(Duration.ofSeconds(60)).until(() -> watch.lastResourceVersion() >= end);
        List<Expected.Frame> expected =
                Expected.directWatch(root, ByteString.copyFromUtf8(KEYS), prefixEnd(), start, end);
        assertThat(expected).hasSize(KEY_COUNT + KEY_COUNT / 3 + KEY_COUNT / 5 + 1);
        assertThat(Expected.received(watch.frames())).isEqualTo(expected);
    }

    private static long put(KV kv, String key, String value) throws Exception {
        return kv.put(bs(key), bs(value)).get(30, TimeUnit.SECONDS).getHeader().getRevision();
    }

    private static KeyValueList list(Stack.Node node) throws Exception {
        var r = Stack.get(
                node.url() + "/v1/kv?key=" + URLEncoder.encode(KEYS, StandardCharsets.UTF_8) + "&prefix=true");
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

    private static ByteString prefixEnd() {
        return ByteString.copyFrom(OptionsUtil.prefixEndOf(bs(KEYS)).getBytes());
    }

    private String password(String user, String text) throws Exception {
        return Files.writeString(dir.resolve(user + ".password"), text).toString();
    }

    private String kafkaConfig(KafkaBroker kafka, String user) {
        return kafka.writeSaslClientConfig(dir.resolve(user + "-kafka.properties"), user)
                .toString();
    }

    private static String[] concat(String[] first, String... rest) {
        String[] all = java.util.Arrays.copyOf(first, first.length + rest.length);
        System.arraycopy(rest, 0, all, first.length, rest.length);
        return all;
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
