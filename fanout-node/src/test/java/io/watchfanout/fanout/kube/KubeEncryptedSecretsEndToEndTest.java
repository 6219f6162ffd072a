package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.watchfanout.fanout.e2e.Stack;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets encrypted at rest as kube-apiserver writes them (aescbc: a random IV and AES-CBC with
 * PKCS#7 padding; aesgcm: a random nonce and AES-GCM with the etcd key as additional data; each
 * after {@code k8s:enc:<provider>:v1:<key name>:}), made here with the JDK's ciphers, served
 * decrypted by a node with {@code --encryption-provider-config}; a flipped byte, a wrong key, a
 * key the file does not have and a KMS value are errors for that object, and a key added to the
 * file (rotation) is used without a restart.
 */
class KubeEncryptedSecretsEndToEndTest extends KubeStackTest {
    private static final SecureRandom RANDOM = new SecureRandom();

    @TempDir
    Path dir;

    KubeEncryptedSecretsEndToEndTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    @Test
    void encryptedSecretsAreServedDecryptedAndWhatCannotBeOpenedIsAnErrorForThatObject() throws Exception {
        byte[] gcm1 = key();
        byte[] cbc1 = key();
        byte[] rotated = key();
        Path config = dir.resolve("encryption.yaml");
        Files.writeString(config, configuration(gcm1, cbc1, null));
        byte[] plainA = KubeAuthorizationEndToEndTest.secret("a", "by-gcm");
        put("secrets/a/by-gcm", aesGcm("gcm1", gcm1, plainA, registry + "/secrets/a/by-gcm"));
        put("secrets/a/by-cbc", aesCbc("cbc1", cbc1, KubeAuthorizationEndToEndTest.secret("a", "by-cbc")));
        put("secrets/a/plain", KubeAuthorizationEndToEndTest.secret("a", "plain"));
        Stack.Node node = start("node-enc", "--encryption-provider-config", config.toString());
        HttpClient http = HttpClient.newHttpClient();

        for (String name : new String[] {"by-gcm", "by-cbc", "plain"}) {
            HttpResponse<String> r = get(http, node, "/api/v1/namespaces/a/secrets/" + name);
            assertThat(r.statusCode()).as(name + ": " + r.body()).isEqualTo(200);
            JsonObject secret = JsonParser.parseString(r.body()).getAsJsonObject();
            assertThat(secret.getAsJsonObject("metadata").get("name").getAsString())
                    .isEqualTo(name);
            assertThat(secret.getAsJsonObject("data").get("password").getAsString())
                    .isEqualTo(Base64.getEncoder().encodeToString("s3cret".getBytes(StandardCharsets.UTF_8)));
        }
        HttpResponse<String> list = get(http, node, "/api/v1/namespaces/a/secrets");
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(KubeApiEndToEndTest.names(JsonParser.parseString(list.body()).getAsJsonObject()))
                .containsExactly("by-cbc", "by-gcm", "plain");

        // A flipped byte (the tag fails), the additional data of another key, a wrong key, an unknown key, KMS.
        byte[] flipped = aesGcm(
                "gcm1", gcm1, KubeAuthorizationEndToEndTest.secret("b", "flipped"), registry + "/secrets/b/flipped");
        flipped[flipped.length - 20] ^= 1;
        put("secrets/b/flipped", flipped);
        put(
                "secrets/b/moved",
                aesGcm(
                        "gcm1",
                        gcm1,
                        KubeAuthorizationEndToEndTest.secret("b", "moved"),
                        registry + "/secrets/a/by-gcm"));
        put(
                "secrets/b/wrong-key",
                aesGcm(
                        "gcm1",
                        key(),
                        KubeAuthorizationEndToEndTest.secret("b", "wrong-key"),
                        registry + "/secrets/b/wrong-key"));
        put("secrets/b/rotated", aesCbc("cbc2", rotated, KubeAuthorizationEndToEndTest.secret("b", "rotated")));
        put(
                "secrets/b/kms",
                ("k8s:enc:kms:v2:vault-kms:" + "\u0001\u0002opaque").getBytes(StandardCharsets.ISO_8859_1));
        for (String[] c : new String[][] {
            {"flipped", "aesgcm key \"gcm1\" cannot decrypt it"},
            {"moved", "aesgcm key \"gcm1\" cannot decrypt it"},
            {"wrong-key", "aesgcm key \"gcm1\" cannot decrypt it"},
            {"rotated", "encrypted with aescbc key \"cbc2\", which --encryption-provider-config does not give secrets"},
            {"kms", "encrypted by the KMS provider (v2, vault-kms)"}
        }) {
            HttpResponse<String> r = get(http, node, "/api/v1/namespaces/b/secrets/" + c[0]);
            assertThat(r.statusCode()).as(c[0]).isEqualTo(500);
            String message = JsonParser.parseString(r.body())
                    .getAsJsonObject()
                    .get("message")
                    .getAsString();
            assertThat(message)
                    .as(c[0])
                    .contains(registry + "/secrets/b/" + c[0])
                    .contains(c[1]);
            assertThat(r.body()).doesNotContain("s3cret").doesNotContain("czNjcmV0");
        }
        assertThat(Stack.metrics(node).get("watchfanout_kube_undecryptable_objects_total"))
                .isGreaterThanOrEqualTo(5.0);

        // A list or watch of one object by name reads that key alone, as kube-apiserver's store does: the
        // namespace's Secrets that cannot be opened neither fail it nor are named in it.
        long fine = put("secrets/b/fine", KubeAuthorizationEndToEndTest.secret("b", "fine"));
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        get(http, node, "/api/v1/namespaces/b/secrets/fine").statusCode() == 200);
        HttpResponse<String> one = get(http, node, "/api/v1/namespaces/b/secrets?fieldSelector=metadata.name%3Dfine");
        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(JsonParser.parseString(one.body()).getAsJsonObject().getAsJsonArray("items"))
                .hasSize(1);
        assertThat(one.body()).doesNotContain("flipped").doesNotContain("kms");
        HttpResponse<String> watchOne = get(
                http,
                node,
                "/api/v1/namespaces/b/secrets?watch=1&resourceVersion=0&timeoutSeconds=2"
                        + "&fieldSelector=metadata.name%3Dfine");
        assertThat(watchOne.body().lines().toList())
                .singleElement()
                .satisfies(line -> assertThat(line)
                        .startsWith("{\"type\":\"ADDED\"")
                        .contains("\"resourceVersion\":\"" + fine + "\""));

        // A watch gets the decrypted object, and an ERROR event for one it cannot open.
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        HttpResponse<Stream<String>> watch = http.send(
                HttpRequest.newBuilder(URI.create(node.url() + "/api/v1/namespaces/c/secrets?watch=1&resourceVersion="
                                + put("configmaps/c/marker", "{}".getBytes(StandardCharsets.UTF_8))))
                        .build(),
                HttpResponse.BodyHandlers.ofLines());
        Thread reader = new Thread(() -> watch.body().forEach(lines::add));
        reader.setDaemon(true);
        reader.start();
        put(
                "secrets/c/live",
                aesGcm("gcm1", gcm1, KubeAuthorizationEndToEndTest.secret("c", "live"), registry + "/secrets/c/live"));
        JsonObject added =
                JsonParser.parseString(lines.poll(30, TimeUnit.SECONDS)).getAsJsonObject();
        assertThat(added.get("type").getAsString()).isEqualTo("ADDED");
        assertThat(added.getAsJsonObject("object")
                        .getAsJsonObject("metadata")
                        .get("name")
                        .getAsString())
                .isEqualTo("live");
        put("secrets/c/kms", ("k8s:enc:kms:v2:vault-kms:" + "x").getBytes(StandardCharsets.ISO_8859_1));
        JsonObject error =
                JsonParser.parseString(lines.poll(30, TimeUnit.SECONDS)).getAsJsonObject();
        assertThat(error.get("type").getAsString()).isEqualTo("ERROR");
        assertThat(error.getAsJsonObject("object").get("message").getAsString()).contains("KMS");

        // Rotation: the file gets the new key; the Secret it encrypted opens without a restart.
        Files.writeString(config, configuration(gcm1, cbc1, rotated));
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        get(http, node, "/api/v1/namespaces/b/secrets/rotated").statusCode() == 200);
    }

    private static HttpResponse<String> get(HttpClient http, Stack.Node node, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(node.url() + path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static byte[] key() {
        byte[] k = new byte[32];
        RANDOM.nextBytes(k);
        return k;
    }

    /** kube-apiserver's EncryptionConfiguration: aesgcm first (new writes), aescbc, then identity; {@code cbc2} when rotated in. */
    private static String configuration(byte[] gcm1, byte[] cbc1, byte[] cbc2) {
        return "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
                + "  - resources: [secrets]\n    providers:\n"
                + "      - aesgcm:\n          keys:\n            - name: gcm1\n              secret: "
                + Base64.getEncoder().encodeToString(gcm1) + "\n"
                + "      - aescbc:\n          keys:\n            - name: cbc1\n              secret: "
                + Base64.getEncoder().encodeToString(cbc1) + "\n"
                + (cbc2 == null
                        ? ""
                        : "            - name: cbc2\n              secret: "
                                + Base64.getEncoder().encodeToString(cbc2) + "\n")
                + "      - identity: {}\n";
    }

    /** As kube-apiserver's aesgcm transformer writes: prefix, 12-byte nonce, ciphertext and tag; the etcd key authenticated. */
    private static byte[] aesGcm(String keyName, byte[] key, byte[] plain, String etcdKey) throws Exception {
        byte[] nonce = new byte[12];
        RANDOM.nextBytes(nonce);
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce));
        c.updateAAD(etcdKey.getBytes(StandardCharsets.UTF_8));
        return concat(
                ("k8s:enc:aesgcm:v1:" + keyName + ":").getBytes(StandardCharsets.US_ASCII), nonce, c.doFinal(plain));
    }

    /** As kube-apiserver's aescbc transformer writes: prefix, 16-byte IV, AES-CBC with PKCS#7 padding. */
    private static byte[] aesCbc(String keyName, byte[] key, byte[] plain) throws Exception {
        byte[] iv = new byte[16];
        RANDOM.nextBytes(iv);
        Cipher c = Cipher.getInstance("AES/CBC/PKCS5Padding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
        return concat(("k8s:enc:aescbc:v1:" + keyName + ":").getBytes(StandardCharsets.US_ASCII), iv, c.doFinal(plain));
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
