package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.watchfanout.fanout.e2e.Stack;
import io.watchfanout.fanout.testing.NodeApps;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.FreePorts;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.StackLauncher;
import io.watchfanout.testkit.TlsClientContext;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes API with kube-apiserver's identities and authorizers, end to end: a node with TLS,
 * client certificates (user = CN, groups = O), ServiceAccount tokens checked against the cache,
 * and {@code --authorization-mode=Node,RBAC} over the Roles, ClusterRoles, bindings and pods
 * written into etcd as kube-apiserver stores them; kubectl 1.32 with kubeconfigs holding a client
 * certificate or a token, and Java's HTTP client for watches.
 */
class KubeAuthorizationEndToEndTest extends KubeStackTest {
    private static final String ISSUER = "https://kubernetes.default.svc.cluster.local";
    private static final String RBAC = "rbac.authorization.k8s.io/v1";

    @TempDir
    Path dir;

    private Pki pki;
    private KeyPair serviceAccountKey;
    private Path serviceAccountPublicKey;
    private int port;
    private JavaProcess node;

    KubeAuthorizationEndToEndTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    @BeforeEach
    void setUp() throws Exception {
        pki = Pki.create(dir.resolve("pki"), "kubernetes-ca");
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        serviceAccountKey = rsa.generateKeyPair();
        StringWriter pem = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(pem)) {
            writer.writeObject(serviceAccountKey.getPublic());
        }
        serviceAccountPublicKey = Files.writeString(dir.resolve("sa.pub"), pem.toString());
    }

    // ---- RBAC, certificates and tokens through kubectl ----------------------------------------

    @Test
    void kubectlWithCertificatesAndTokensGetsWhatRbacAllowsAndKubeApiserversWordsOtherwise() throws Exception {
        writeClusterBasics();
        put("secrets/a/db-password", secret("a", "db-password"));
        put("secrets/b/api-key", secret("b", "api-key"));
        put("configmaps/b/settings", configMap("b", "settings"));
        put("configmaps/b/other", configMap("b", "other"));
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));
        put("pods/b/job-0", StoredObjects.pod("b", "job-0", "node-2", "Running", "job"));
        // jane reads Secrets in a (a Role), and one ConfigMap by name in b (a ClusterRole bound by a RoleBinding).
        put("roles/a/secret-reader", role("Role", "a", "secret-reader", rule("get,list,watch", "", "secrets", "")));
        put(
                "rolebindings/a/jane-secrets",
                binding("RoleBinding", "a", "jane-secrets", "Role", "secret-reader", user("jane")));
        put(
                "clusterroles/settings-reader",
                role("ClusterRole", "", "settings-reader", rule("get,list,watch", "", "configmaps", "settings")));
        put(
                "rolebindings/b/jane-settings",
                binding("RoleBinding", "b", "jane-settings", "ClusterRole", "settings-reader", user("jane")));
        // Members of "viewers" list anything anywhere (wildcards).
        put("clusterroles/lister", role("ClusterRole", "", "lister", rule("list", "*", "*", "")));
        put(
                "clusterrolebindings/viewers",
                binding("ClusterRoleBinding", "", "viewers", "ClusterRole", "lister", group("viewers")));
        // The ServiceAccount b/robot lists pods in b.
        put("serviceaccounts/b/robot", serviceAccount("b", "robot", "sa-uid-robot"));
        put("roles/b/pod-lister", role("Role", "b", "pod-lister", rule("list", "", "pods", "")));
        put(
                "rolebindings/b/robot-pods",
                binding(
                        "RoleBinding",
                        "b",
                        "robot-pods",
                        "Role",
                        "pod-lister",
                        "{\"kind\":\"ServiceAccount\",\"name\":\"robot\",\"namespace\":\"b\"}"));
        startSecuredNode();

        Path jane = kubeconfig("jane", pki.client("jane", "jane"), null);
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(kubectl(jane, "get", "secrets", "-n", "a", "-o", "name")
                                .out())
                        .isEqualTo("secret/db-password\n"));
        assertThat(kubectl(jane, "get", "secret", "db-password", "-n", "a", "-o", "jsonpath={.metadata.name}")
                        .out())
                .isEqualTo("db-password");
        Result otherNamespace = kubectl(jane, "get", "secrets", "-n", "b");
        assertThat(otherNamespace.code()).isEqualTo(1);
        assertThat(otherNamespace.err())
                .contains("Error from server (Forbidden): secrets is forbidden: User \"jane\" cannot list resource "
                        + "\"secrets\" in API group \"\" in the namespace \"b\"");
        // resourceNames: the one ConfigMap by name, also as a list with a metadata.name field selector; not the rest.
        assertThat(kubectl(jane, "get", "configmap", "settings", "-n", "b", "-o", "name")
                        .out())
                .isEqualTo("configmap/settings\n");
        assertThat(kubectl(
                                jane,
                                "get",
                                "configmaps",
                                "-n",
                                "b",
                                "--field-selector",
                                "metadata.name=settings",
                                "-o",
                                "name")
                        .out())
                .isEqualTo("configmap/settings\n");
        assertThat(kubectl(jane, "get", "configmap", "other", "-n", "b").err())
                .contains("configmaps \"other\" is forbidden: User \"jane\" cannot get resource \"configmaps\" in API "
                        + "group \"\" in the namespace \"b\"");
        assertThat(kubectl(jane, "get", "configmaps", "-n", "b").err())
                .contains("User \"jane\" cannot list resource \"configmaps\"");
        assertThat(kubectl(jane, "get", "pods", "-A").err())
                .contains("pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" at the "
                        + "cluster scope");

        // kubectl auth can-i and whoami: questions, answered from the authorizers and the identity this node uses.
        Result can = kubectl(jane, "auth", "can-i", "list", "secrets", "-n", "a");
        assertThat(can.out()).as(can.err()).isEqualTo("yes\n");
        Result cannot = kubectl(jane, "auth", "can-i", "list", "secrets", "-n", "b");
        assertThat(cannot.code()).isEqualTo(1);
        assertThat(cannot.out()).isEqualTo("no\n");
        assertThat(kubectl(jane, "auth", "can-i", "get", "configmaps/settings", "-n", "b")
                        .out())
                .isEqualTo("yes\n");
        assertThat(kubectl(jane, "auth", "can-i", "get", "configmaps/other", "-n", "b")
                        .out())
                .isEqualTo("no\n");
        // A write is never allowed here, whatever kube-apiserver would say: this tier only reads.
        Result write = kubectl(jane, "auth", "can-i", "delete", "secrets", "-n", "a");
        assertThat(write.code()).isEqualTo(1);
        assertThat(write.out()).startsWith("no - this node is a read-only tier of the Kubernetes API");
        JsonObject whoami = JsonParser.parseString(
                        kubectl(jane, "auth", "whoami", "-o", "json").out())
                .getAsJsonObject();
        assertThat(whoami.get("kind").getAsString()).isEqualTo("SelfSubjectReview");
        JsonObject userInfo = whoami.getAsJsonObject("status").getAsJsonObject("userInfo");
        assertThat(userInfo.get("username").getAsString()).isEqualTo("jane");
        assertThat(userInfo.get("groups").toString()).contains("system:authenticated");

        // fabric8 with the same certificate.
        Pki.Issued janeFabric8 = pki.client("jane-fabric8", "jane");
        Config config = new ConfigBuilder(Config.empty())
                .withMasterUrl(url(""))
                .withCaCertFile(pki.caCert().toString())
                .withClientCertFile(janeFabric8.cert().toString())
                .withClientKeyFile(janeFabric8.key().toString())
                .withClientKeyAlgo("EC")
                .build();
        try (KubernetesClient fabric8 =
                new KubernetesClientBuilder().withConfig(config).build()) {
            assertThat(fabric8.secrets().inNamespace("a").list().getItems())
                    .extracting(x -> x.getMetadata().getName())
                    .containsExactly("db-password");
            assertThatThrownBy(() -> fabric8.secrets().inNamespace("b").list())
                    .isInstanceOf(KubernetesClientException.class)
                    .satisfies(e -> assertThat(((KubernetesClientException) e).getCode())
                            .isEqualTo(403))
                    .hasMessageContaining("User \"jane\" cannot list resource \"secrets\" in API group \"\" in the "
                            + "namespace \"b\"");
        }

        // Groups from the certificate's organizations; wildcards in a ClusterRoleBinding.
        Path vic = kubeconfig("vic", pki.client("vic", "vic", "viewers"), null);
        assertThat(kubectl(vic, "get", "pods", "-A", "-o", "name").out()).isEqualTo("pod/web-0\npod/job-0\n");
        assertThat(kubectl(vic, "get", "secrets", "-A", "-o", "name").out())
                .isEqualTo("secret/db-password\nsecret/api-key\n");
        assertThat(kubectl(vic, "get", "secret", "api-key", "-n", "b").err())
                .contains("User \"vic\" cannot get resource \"secrets\"");

        // A ServiceAccount token: its RoleBinding, and nothing else.
        Path robot = kubeconfig("robot", null, serviceAccountToken("b", "robot", "sa-uid-robot", ISSUER, ISSUER, 3600));
        assertThat(kubectl(robot, "get", "pods", "-n", "b", "-o", "name").out()).isEqualTo("pod/job-0\n");
        assertThat(kubectl(robot, "get", "pods", "-n", "a").err())
                .contains(
                        "User \"system:serviceaccount:b:robot\" cannot list resource \"pods\" in API group \"\" in the "
                                + "namespace \"a\"");

        // The npm @kubernetes/client-node with the same token.
        String robotToken = serviceAccountToken("b", "robot", "sa-uid-robot", ISSUER, ISSUER, 3600);
        assertThat(clientNode(robotToken, "b")).isEqualTo("{\"names\":[\"job-0\"]}");
        assertThat(clientNode(robotToken, "a"))
                .isEqualTo("{\"code\":403,\"message\":\"pods is forbidden: User \\\"system:serviceaccount:b:robot\\\" "
                        + "cannot list resource \\\"pods\\\" in API group \\\"\\\" in the namespace \\\"a\\\"\"}");

        // Debian's python3-kubernetes with the same token.
        assertThat(python(robotToken, "b")).isEqualTo("{\"names\": [\"job-0\"]}");
        assertThat(python(robotToken, "a")).startsWith("{\"code\": 403, \"message\": \"pods is forbidden: User");

        // Bad credentials: 401, nothing served.
        for (String token : List.of(
                serviceAccountToken("b", "robot", "sa-uid-robot", "https://another.issuer", ISSUER, 3600),
                serviceAccountToken("b", "robot", "sa-uid-robot", ISSUER, "vault", 3600),
                serviceAccountToken("b", "robot", "sa-uid-robot", ISSUER, ISSUER, -600),
                serviceAccountToken("b", "robot", "another-uid", ISSUER, ISSUER, 3600),
                serviceAccountToken("b", "ghost", "sa-uid-ghost", ISSUER, ISSUER, 3600),
                "not-a-known-token")) {
            Result refused = kubectl(kubeconfig("bad", null, token), "get", "pods", "-n", "b");
            assertThat(refused.code()).as(token).isEqualTo(1);
            assertThat(refused.err())
                    .as(token)
                    .contains("You must be logged in to the server")
                    .doesNotContain("job-0");
        }
        HttpResponse<String> unsigned = get(
                https(null),
                "/api/v1/namespaces/b/pods",
                "Bearer " + unsignedCopy(serviceAccountToken("b", "robot", "sa-uid-robot", ISSUER, ISSUER, 3600)));
        assertThat(unsigned.statusCode()).isEqualTo(401);
        assertThat(unsigned.body()).doesNotContain("job-0");
        // Malformed Authorization headers, and a token signed by a key the node does not have.
        for (String authorization : List.of("Basic YWxpY2U6cHc=", "Bearer", "Bearer a b")) {
            HttpResponse<String> malformed = get(https(null), "/api/v1/namespaces/b/pods", authorization);
            assertThat(malformed.statusCode()).as(authorization).isEqualTo(401);
            assertThat(malformed.body()).as(authorization).doesNotContain("job-0");
        }
        KeyPair nodeKnown = serviceAccountKey;
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        serviceAccountKey = rsa.generateKeyPair();
        String unknownKey = serviceAccountToken("b", "robot", "sa-uid-robot", ISSUER, ISSUER, 3600);
        serviceAccountKey = nodeKnown;
        assertThat(get(https(null), "/api/v1/namespaces/b/pods", "Bearer " + unknownKey)
                        .statusCode())
                .isEqualTo(401);
        // The ServiceAccount deleted: its tokens are refused.
        delete("serviceaccounts/b/robot");
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(
                                kubectl(robot, "get", "pods", "-n", "b").err())
                        .contains("You must be logged in to the server (service account token refers to "
                                + "serviceaccounts b/robot, which no longer exists)"));
        // Without a certificate or token: system:anonymous, whom nothing here allows.
        HttpResponse<String> anonymous = get(https(null), "/api/v1/namespaces/a/secrets", null);
        assertThat(anonymous.statusCode()).isEqualTo(401);
    }

    // ---- a watch that loses its binding ----------------------------------------------------

    @Test
    void aWatchWhoseBindingIsDeletedEndsWithA403ErrorEventAndANewBindingNeedsNoRestart() throws Exception {
        writeClusterBasics();
        put("secrets/a/db-password", secret("a", "db-password"));
        put("roles/a/secret-reader", role("Role", "a", "secret-reader", rule("get,list,watch", "", "secrets", "")));
        put(
                "rolebindings/a/jane-secrets",
                binding("RoleBinding", "a", "jane-secrets", "Role", "secret-reader", user("jane")));
        startSecuredNode();
        HttpClient jane = https(pki.client("jane", "jane"));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get(jane, "/api/v1/namespaces/a/secrets", null).statusCode() == 200);

        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        HttpResponse<Stream<String>> watch = jane.send(
                HttpRequest.newBuilder(URI.create(url("/api/v1/namespaces/a/secrets?watch=1")))
                        .build(),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(watch.statusCode()).isEqualTo(200);
        Thread reader = new Thread(() -> {
            watch.body().forEach(lines::add);
            lines.add("<end>");
        });
        reader.setDaemon(true);
        reader.start();
        assertThat(type(lines.poll(30, TimeUnit.SECONDS))).isEqualTo("ADDED");
        put("secrets/a/api-key", secret("a", "api-key"));
        assertThat(type(lines.poll(30, TimeUnit.SECONDS))).isEqualTo("ADDED");

        delete("rolebindings/a/jane-secrets");
        String error = lines.poll(30, TimeUnit.SECONDS);
        JsonObject event = JsonParser.parseString(error).getAsJsonObject();
        assertThat(event.get("type").getAsString()).isEqualTo("ERROR");
        JsonObject status = event.getAsJsonObject("object");
        assertThat(status.get("code").getAsInt()).isEqualTo(403);
        assertThat(status.get("reason").getAsString()).isEqualTo("Forbidden");
        assertThat(status.get("message").getAsString())
                .isEqualTo("secrets is forbidden: User \"jane\" cannot watch resource \"secrets\" in API group \"\" in "
                        + "the namespace \"a\"");
        assertThat(lines.poll(30, TimeUnit.SECONDS)).isEqualTo("<end>");
        assertThat(get(jane, "/api/v1/namespaces/a/secrets", null).statusCode()).isEqualTo(403);
        // The audit trail: the watch's start, its revocation and its end, with the request's attributes.
        String kube = "\"verb\":\"watch\",\"apiGroup\":\"\",\"resource\":\"secrets\",\"namespace\":\"a\",\"name\":\"\"";
        assertThat(node.awaitLog("\"audit\":\"watch-start\"", Duration.ofSeconds(10)))
                .contains("\"identity\":\"jane\"", "\"method\":\"certificate\"", kube);
        assertThat(node.awaitLog("cannot watch resource", Duration.ofSeconds(10)))
                .contains("\"audit\":\"denied\"", "\"identity\":\"jane\"", kube);
        assertThat(node.awaitLog("\"audit\":\"watch-end\"", Duration.ofSeconds(10)))
                .contains(kube, "\"reason\":\"forbidden\"");

        // Bound again: allowed again, without a restart.
        put(
                "rolebindings/a/jane-again",
                binding("RoleBinding", "a", "jane-again", "Role", "secret-reader", user("jane")));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get(jane, "/api/v1/namespaces/a/secrets", null).statusCode() == 200);
    }

    // ---- the Node authorizer ----------------------------------------------------------------

    @Test
    void aKubeletSeesItsOwnPodsAndTheSecretsTheyReferenceAndANewPodMakesAnotherVisible() throws Exception {
        writeClusterBasics();
        put("secrets/shop/db-password", secret("shop", "db-password"));
        put("secrets/shop/api-key", secret("shop", "api-key"));
        put("pods/shop/web-0", podUsingSecret("shop", "web-0", "node-1", "db-password"));
        put("pods/shop/web-1", podUsingSecret("shop", "web-1", "node-2", "api-key"));
        startSecuredNode();
        HttpClient kubelet = https(pki.client("kubelet-1", "system:node:node-1", "system:nodes"));

        await().atMost(Duration.ofSeconds(30))
                .until(() -> get(kubelet, "/api/v1/namespaces/shop/secrets/db-password", null)
                                .statusCode()
                        == 200);
        HttpResponse<String> other = get(kubelet, "/api/v1/namespaces/shop/secrets/api-key", null);
        assertThat(other.statusCode()).isEqualTo(403);
        assertThat(JsonParser.parseString(other.body())
                        .getAsJsonObject()
                        .get("message")
                        .getAsString())
                .isEqualTo("secrets \"api-key\" is forbidden: User \"system:node:node-1\" cannot get resource "
                        + "\"secrets\" in API group \"\" in the namespace \"shop\": no relationship found between node "
                        + "'node-1' and this object");
        // Its pods: by node name selector, and one by name; not the other node's.
        HttpResponse<String> mine = get(kubelet, "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1", null);
        assertThat(mine.statusCode()).isEqualTo(200);
        assertThat(KubeApiEndToEndTest.names(JsonParser.parseString(mine.body()).getAsJsonObject()))
                .containsExactly("web-0");
        assertThat(get(kubelet, "/api/v1/pods", null).statusCode()).isEqualTo(403);
        assertThat(get(kubelet, "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-2", null)
                        .statusCode())
                .isEqualTo(403);
        assertThat(get(kubelet, "/api/v1/namespaces/shop/pods/web-1", null).statusCode())
                .isEqualTo(403);
        // A watch of the one Secret by name, as kubelets watch them.
        assertThat(get(kubelet, "/api/v1/namespaces/shop/secrets?fieldSelector=metadata.name%3Ddb-password", null)
                        .statusCode())
                .isEqualTo(200);

        // A new pod on node-1 that references api-key makes it visible to node-1.
        put("pods/shop/web-2", podUsingSecret("shop", "web-2", "node-1", "api-key"));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get(kubelet, "/api/v1/namespaces/shop/secrets/api-key", null)
                                .statusCode()
                        == 200);
        // And the pod deleted, it is gone again.
        delete("pods/shop/web-2");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get(kubelet, "/api/v1/namespaces/shop/secrets/api-key", null)
                                .statusCode()
                        == 403);
    }

    // ---- the front proxy ------------------------------------------------------------------------

    @Test
    void aFrontProxyNamesTheUserInHeadersAndNoOtherCertificateCan() throws Exception {
        writeClusterBasics();
        put("pods/a/web-0", StoredObjects.pod("a", "web-0", "node-1", "Running", "web"));
        put("clusterroles/lister", role("ClusterRole", "", "lister", rule("list", "*", "*", "")));
        put(
                "clusterrolebindings/viewers",
                binding("ClusterRoleBinding", "", "viewers", "ClusterRole", "lister", group("viewers")));
        Pki proxyCa = Pki.create(dir.resolve("proxy-pki"), "front-proxy-ca");
        // As kube-apiserver's: --client-ca-file holds the users' CA only; the handshake trusts the proxy's too.
        startSecuredNode(
                pki.caCert(),
                "--requestheader-client-ca-file",
                proxyCa.caCert().toString(),
                "--requestheader-allowed-names",
                "front-proxy-client",
                "--requestheader-username-headers",
                "X-Remote-User",
                "--requestheader-group-headers",
                "X-Remote-Group",
                "--requestheader-extra-headers-prefix",
                "X-Remote-Extra-");
        HttpClient proxy = https(proxyCa.client("front-proxy-client", "front-proxy-client"));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> send(proxy, "/api/v1/pods", "X-Remote-User", "alice", "X-Remote-Group", "viewers")
                                .statusCode()
                        == 200);
        HttpResponse<String> noGroup = send(proxy, "/api/v1/pods", "X-Remote-User", "alice");
        assertThat(noGroup.statusCode()).isEqualTo(403);
        assertThat(noGroup.body()).contains("User \\\"alice\\\" cannot list resource \\\"pods\\\"");
        // A proxy certificate whose name is not allowed is refused; a user's certificate names only its user.
        HttpResponse<String> rogue = send(
                https(proxyCa.client("rogue", "rogue")),
                "/api/v1/pods",
                "X-Remote-User",
                "alice",
                "X-Remote-Group",
                "viewers");
        assertThat(rogue.statusCode()).isEqualTo(401);
        assertThat(rogue.body()).doesNotContain("web-0");
        HttpResponse<String> jane = send(
                https(pki.client("jane", "jane")),
                "/api/v1/pods",
                "X-Remote-User",
                "alice",
                "X-Remote-Group",
                "viewers");
        assertThat(jane.statusCode()).isEqualTo(403);
        assertThat(jane.body()).contains("User \\\"jane\\\" cannot list");
        // The proxy's certificate names no user of its own: without the header it is not "front-proxy-client".
        put(
                "clusterrolebindings/proxy-as-user",
                binding(
                        "ClusterRoleBinding",
                        "",
                        "proxy-as-user",
                        "ClusterRole",
                        "lister",
                        user("front-proxy-client")));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> send(proxy, "/api/v1/pods", "X-Remote-User", "front-proxy-client")
                                .statusCode()
                        == 200);
        HttpResponse<String> bare = send(proxy, "/api/v1/pods");
        assertThat(bare.statusCode()).isIn(401, 403);
        assertThat(bare.body()).doesNotContain("web-0").doesNotContain("front-proxy-client");
    }

    // ---- the stack ----------------------------------------------------------------------------

    /** What every cluster has: discovery and /version for every authenticated user (kube-apiserver's bootstrap policy). */
    private void writeClusterBasics() throws Exception {
        put(
                "clusterroles/system:discovery",
                role(
                        "ClusterRole",
                        "",
                        "system:discovery",
                        "{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/api\",\"/api/*\",\"/apis\",\"/apis/*\","
                                + "\"/version\",\"/version/\"]}"));
        put(
                "clusterrolebindings/system:discovery",
                binding(
                        "ClusterRoleBinding",
                        "",
                        "system:discovery",
                        "ClusterRole",
                        "system:discovery",
                        group("system:authenticated")));
    }

    private void startSecuredNode() throws Exception {
        startSecuredNode(pki.caCert());
    }

    private void startSecuredNode(Path clientCas, String... extra) throws Exception {
        closer.keep(Stack.ingester(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix));
        Pki.Issued server = pki.server("node", "node");
        port = FreePorts.pick();
        node = closer.keep(StackLauncher.on(null, kafka.bootstrapServers(), topicPrefix)
                .node(
                        JavaProcess.builder("io.watchfanout.fanout.FanoutNodeMain")
                                .name("authz-node")
                                .maxHeap("384m"),
                        port,
                        "authz-node",
                        false)
                .args("--kube-prefix", registry, "--etcd-endpoints", etcdServer.clientUrl())
                .args(
                        "--tls-cert-file",
                        server.cert().toString(),
                        "--tls-key-file",
                        server.key().toString())
                .args("--client-ca-file", clientCas.toString(), "--client-cert-auth")
                .args("--service-account-key-file", serviceAccountPublicKey.toString())
                .args("--service-account-issuer", ISSUER)
                .args("--authorization-mode", "Node,RBAC")
                .args(extra)
                .start());
        HttpClient probe = https(null);
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    if (!node.isAlive()) {
                        throw new AssertionError("the node exited; its log ends with:\n" + node.logTail(30));
                    }
                    try {
                        return get(probe, "/readyz", null).statusCode() == 200;
                    } catch (IOException e) {
                        return false;
                    }
                });
    }

    private String url(String path) {
        return "https://127.0.0.1:" + port + path;
    }

    private HttpClient https(Pki.Issued client) {
        return HttpClient.newBuilder()
                .sslContext(TlsClientContext.of(pki.caCert(), client))
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    private HttpResponse<String> get(HttpClient client, String path, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(path))).timeout(Duration.ofSeconds(30));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** GET with headers given as name, value, name, value, ... */
    private HttpResponse<String> send(HttpClient client, String path, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(path))).timeout(Duration.ofSeconds(30));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String type(String line) {
        assertThat(line).as("a watch event").isNotNull();
        return JsonParser.parseString(line).getAsJsonObject().get("type").getAsString();
    }

    // ---- kubectl and @kubernetes/client-node ------------------------------------------------

    /** {@code src/test/python/kube_list.py} with Debian's python3-kubernetes: one JSON line. */
    private String python(String token, String namespace) throws Exception {
        Process p = new ProcessBuilder(
                        "/usr/bin/python3",
                        Path.of("src", "test", "python", "kube_list.py")
                                .toAbsolutePath()
                                .toString(),
                        url(""),
                        pki.caCert().toString(),
                        token,
                        namespace)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(out).isTrue();
        return out.strip();
    }

    /** {@code src/test/node/kube-client-node/list.mjs}: one JSON line, the pod names or the refusal. */
    private String clientNode(String token, String namespace) throws Exception {
        Path app = NodeApps.install(
                "kube-client-node",
                "@kubernetes/client-node",
                List.of("package.json", "package-lock.json", "list.mjs"));
        Process p = new ProcessBuilder("node", "list.mjs", url(""), pki.caCert().toString(), token, namespace)
                .directory(app.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(out).isTrue();
        return out.strip();
    }

    record Result(int code, String out, String err) {}

    /** A kubeconfig for the node with a client certificate or a bearer token. */
    private Path kubeconfig(String name, Pki.Issued certificate, String token) throws IOException {
        StringBuilder user = new StringBuilder();
        if (certificate != null) {
            user.append("    client-certificate: ").append(certificate.cert()).append('\n');
            user.append("    client-key: ").append(certificate.key()).append('\n');
        }
        if (token != null) {
            user.append("    token: ").append(token).append('\n');
        }
        String config = "apiVersion: v1\nkind: Config\nclusters:\n- name: fanout\n  cluster:\n    server: "
                + url("") + "\n    certificate-authority: " + pki.caCert() + "\nusers:\n- name: " + name
                + "\n  user:\n" + user + "contexts:\n- name: " + name + "\n  context:\n    cluster: fanout\n    user: "
                + name + "\ncurrent-context: " + name + "\n";
        return Files.writeString(dir.resolve("kubeconfig-" + name + "-" + System.nanoTime()), config);
    }

    private Result kubectl(Path kubeconfig, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                "/usr/bin/kubectl",
                "--kubeconfig",
                kubeconfig.toString(),
                "--cache-dir",
                dir.resolve("cache").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("HOME", dir.toString());
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        pb.redirectOutput(out.toFile());
        pb.redirectError(err.toFile());
        Process p = pb.start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS))
                .as("kubectl %s ended", command)
                .isTrue();
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    // ---- objects as kube-apiserver stores them ----------------------------------------------

    private static String meta(String namespace, String name) {
        return "\"metadata\":{\"name\":\"" + name + "\""
                + (namespace.isEmpty() ? "" : ",\"namespace\":\"" + namespace + "\"") + ",\"uid\":\"uid-" + namespace
                + "-" + name + "\",\"creationTimestamp\":{\"seconds\":\"1700000000\"}}";
    }

    static String rule(String verbs, String apiGroups, String resources, String resourceNames) {
        return "{\"verbs\":" + array(verbs) + ",\"apiGroups\":" + array(apiGroups) + ",\"resources\":"
                + array(resources) + (resourceNames.isEmpty() ? "" : ",\"resourceNames\":" + array(resourceNames))
                + "}";
    }

    private static String array(String commaSeparated) {
        List<String> quoted = new ArrayList<>();
        for (String s : commaSeparated.split(",", -1)) {
            quoted.add("\"" + s + "\"");
        }
        return "[" + String.join(",", quoted) + "]";
    }

    static byte[] role(String kind, String namespace, String name, String rule) {
        return StoredObjects.protobuf(RBAC, kind, "{" + meta(namespace, name) + ",\"rules\":[" + rule + "]}");
    }

    static String user(String name) {
        return "{\"kind\":\"User\",\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"" + name + "\"}";
    }

    static String group(String name) {
        return "{\"kind\":\"Group\",\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"" + name + "\"}";
    }

    static byte[] binding(
            String kind, String namespace, String name, String roleKind, String roleName, String subject) {
        return StoredObjects.protobuf(
                RBAC,
                kind,
                "{" + meta(namespace, name) + ",\"subjects\":[" + subject + "],\"roleRef\":{\"apiGroup\":"
                        + "\"rbac.authorization.k8s.io\",\"kind\":\"" + roleKind + "\",\"name\":\"" + roleName
                        + "\"}}");
    }

    static byte[] secret(String namespace, String name) {
        return StoredObjects.protobuf(
                "v1",
                "Secret",
                "{" + meta(namespace, name) + ",\"data\":{\"password\":\""
                        + Base64.getEncoder().encodeToString("s3cret".getBytes(StandardCharsets.UTF_8))
                        + "\"},\"type\":\"Opaque\"}");
    }

    private static byte[] configMap(String namespace, String name) {
        return StoredObjects.protobuf("v1", "ConfigMap", "{" + meta(namespace, name) + ",\"data\":{\"k\":\"v\"}}");
    }

    private static byte[] serviceAccount(String namespace, String name, String uid) {
        return StoredObjects.protobuf(
                "v1",
                "ServiceAccount",
                "{\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"" + namespace + "\",\"uid\":\"" + uid
                        + "\"}}");
    }

    /** A pod on {@code node} with {@code secret} mounted as a volume. */
    private static byte[] podUsingSecret(String namespace, String name, String node, String secret) {
        return StoredObjects.protobuf(
                "v1",
                "Pod",
                "{" + meta(namespace, name) + ",\"spec\":{\"nodeName\":\"" + node + "\",\"volumes\":[{\"name\":\"s\","
                        + "\"volumeSource\":{\"secret\":{\"secretName\":\"" + secret + "\"}}}],"
                        + "\"containers\":[{\"name\":\"main\",\"image\":\"nginx:1.27\"}]},\"status\":{\"phase\":\"Running\"}}");
    }

    // ---- ServiceAccount tokens ---------------------------------------------------------------

    /** A bound token as kube-apiserver's TokenRequest issues it, valid for {@code seconds} (negative: expired). */
    private String serviceAccountToken(
            String namespace, String name, String uid, String issuer, String audience, long seconds) throws Exception {
        Instant now = Instant.now();
        JWTClaimsSet claims = new JWTClaimsSet.Builder()
                .issuer(issuer)
                .audience(audience)
                .subject("system:serviceaccount:" + namespace + ":" + name)
                .issueTime(Date.from(now.minusSeconds(Math.max(0, -seconds) + 60)))
                .notBeforeTime(Date.from(now.minusSeconds(Math.max(0, -seconds) + 60)))
                .expirationTime(Date.from(now.plusSeconds(seconds)))
                .claim(
                        "kubernetes.io",
                        Map.of("namespace", namespace, "serviceaccount", Map.of("name", name, "uid", uid)))
                .build();
        String kid = Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(MessageDigest.getInstance("SHA-256")
                        .digest(serviceAccountKey.getPublic().getEncoded()));
        SignedJWT jwt = new SignedJWT(
                new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(kid).build(), claims);
        jwt.sign(new RSASSASigner(serviceAccountKey.getPrivate()));
        return jwt.serialize();
    }

    /**
     * The token with a character of its signature changed (not the last, whose low bits are
     * padding that base64url decoders ignore).
     */
    private static String unsignedCopy(String token) {
        int at = token.length() - 10;
        char c = token.charAt(at);
        return token.substring(0, at) + (c == 'A' ? 'B' : 'A') + token.substring(at + 1);
    }
}
