package io.watchfanout.localstack;

import io.etcd.jetcd.auth.Permission;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.TlsClientContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import javax.net.ssl.SSLContext;

/**
 * The throwaway security of {@code bin/local-stack --secure} (docs/SECURITY.md): a CA and
 * certificates, passwords and bearer tokens, a policy, and the flags that make etcd, Kafka, the
 * ingester and the fan-out nodes use them, all under {@code <data dir>/secure/}.
 *
 * <ul>
 *   <li>etcd: https only, client certificates required, authentication on (users {@code root},
 *       {@code watchfanout-ingester} and {@code watchfanout-node} read everything; {@code alice}
 *       reads {@code /registry/configmaps/} and {@code /registry/pods/}).
 *   <li>Kafka: the ingester and the nodes on a SASL_SSL listener (users {@code ingester} and
 *       {@code fanout}); the broker's own PLAINTEXT listener stays on loopback.
 *   <li>The ingester: TLS on its operations port.
 *   <li>The nodes: TLS on both ports (client certificates asked for, verified when presented),
 *       authentication by client certificate, bearer token or etcd user, and a policy file:
 *       {@code admin} may do everything, {@code alice} watch and read
 *       {@code /registry/configmaps/} and {@code /registry/pods/}; nothing else.
 * </ul>
 *
 * Passwords, tokens and the CA are made once per data directory (etcd keeps its users across
 * restarts on the same directory, and clients keep their copy of the CA's certificate); the other
 * certificates are issued anew by that CA at every start. Keys, passwords and tokens are readable
 * by their owner only. Not thread-safe: used by the stack's starting thread.
 */
final class SecureStack {
    /** The subjects of the policy and the tokens. */
    static final String ADMIN = "admin";

    static final String ALICE = "alice";
    /** What alice may watch and read. */
    static final List<String> ALICE_PREFIXES = List.of("/registry/configmaps/", "/registry/pods/");

    private static final String INGESTER_ETCD_USER = "watchfanout-ingester";
    private static final String NODE_ETCD_USER = "watchfanout-node";
    private static final String KAFKA_INGESTER = "ingester";
    private static final String KAFKA_NODE = "fanout";
    private static final String KAFKA_KUBE_TOPICS = "kube-topics";

    private final Path dir;
    private final Pki pki;
    private final Properties secrets;
    private final Pki.Issued aliceCert;
    private final Pki.Issued serverCert;
    private Path ingesterKafkaConfig;
    private Path nodeKafkaConfig;
    private Path kubeTopicsKafkaConfig;
    private EtcdServer etcd;

    private SecureStack(Path dir, Pki pki, Properties secrets) {
        this.dir = dir;
        this.pki = pki;
        this.secrets = secrets;
        this.aliceCert = pki.client("alice", ALICE);
        // One certificate for the ingester's and the nodes' listeners: they all answer on 127.0.0.1.
        this.serverCert = pki.server("watchfanout", "watchfanout");
    }

    /**
     * Makes the material under {@code dataDir/secure}, reusing the passwords and tokens of an
     * earlier run there.
     *
     * @throws UncheckedIOException if the directory cannot be written
     */
    static SecureStack create(Path dataDir) {
        Path dir = dataDir.resolve("secure");
        try {
            Files.createDirectories(dir);
            Properties secrets = new Properties();
            Path file = dir.resolve("secrets.properties");
            if (Files.isRegularFile(file)) {
                try (InputStream in = Files.newInputStream(file)) {
                    secrets.load(in);
                }
            }
            for (String key : List.of(
                    "etcd.root",
                    "etcd." + INGESTER_ETCD_USER,
                    "etcd." + NODE_ETCD_USER,
                    "etcd." + ALICE,
                    "kafka." + KAFKA_INGESTER,
                    "kafka." + KAFKA_NODE,
                    "kafka." + KAFKA_KUBE_TOPICS,
                    "token." + ADMIN,
                    "token." + ALICE)) {
                if (!secrets.containsKey(key)) {
                    secrets.setProperty(key, random());
                }
            }
            try (OutputStream out = Files.newOutputStream(file)) {
                secrets.store(out, "bin/local-stack --secure: throwaway passwords and tokens of this data directory");
            }
            Pki.ownerOnly(file);
            SecureStack s = new SecureStack(dir, Pki.open(dir.resolve("pki"), "ca"), secrets);
            s.writeFiles();
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the secured stack's files under " + dir, e);
        }
    }

    private static String random() {
        byte[] b = new byte[18];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private void writeFiles() throws IOException {
        write("etcd-root-password", secrets.getProperty("etcd.root"));
        write("etcd-ingester-password", secrets.getProperty("etcd." + INGESTER_ETCD_USER));
        write("etcd-node-password", secrets.getProperty("etcd." + NODE_ETCD_USER));
        write("etcd-alice-password", secrets.getProperty("etcd." + ALICE));
        // kube-apiserver's --token-auth-file: token,user,uid[,"groups"]
        write(
                "tokens.csv",
                token(ADMIN) + "," + ADMIN + ",1\n" + token(ALICE) + "," + ALICE + ",2,\"config-readers\"\n");
        StringBuilder prefixes = new StringBuilder();
        for (String p : ALICE_PREFIXES) {
            prefixes.append(prefixes.length() == 0 ? "" : ", ")
                    .append('"')
                    .append(p)
                    .append('"');
        }
        write(
                "policy.json",
                "{\"rules\": [\n"
                        + "  {\"subjects\": [\"" + ADMIN + "\"], \"verbs\": [\"*\"], \"prefixes\": [\"\"]},\n"
                        + "  {\"subjects\": [\"" + ALICE + "\"], \"verbs\": [\"watch\", \"read\"], \"prefixes\": ["
                        + prefixes + "]}\n"
                        + "]}\n");
    }

    private void write(String name, String content) throws IOException {
        Files.writeString(dir.resolve(name), content, StandardCharsets.UTF_8);
        Pki.ownerOnly(dir.resolve(name));
    }

    /** The directory of the material. */
    Path dir() {
        return dir;
    }

    /** The CA certificate every part's certificate is signed by (curl's and etcdctl's {@code --cacert}). */
    Path caCert() {
        return pki.caCert();
    }

    /** alice's client certificate ({@code CN=alice}). */
    Pki.Issued aliceCert() {
        return aliceCert;
    }

    /** The bearer token of a user of the token file. */
    String token(String user) {
        return secrets.getProperty("token." + user);
    }

    /** The file holding an etcd user's password ({@code root}, {@code alice}). */
    Path etcdPasswordFile(String user) {
        return dir.resolve("etcd-" + user + "-password");
    }

    /** etcd with TLS and authentication, and the users of the stack. */
    EtcdServer.Builder etcd(EtcdServer.Builder b) {
        return b.tls(pki)
                .rootPassword(secrets.getProperty("etcd.root"))
                .user(INGESTER_ETCD_USER, secrets.getProperty("etcd." + INGESTER_ETCD_USER), Permission.Type.READ, "")
                .user(NODE_ETCD_USER, secrets.getProperty("etcd." + NODE_ETCD_USER), Permission.Type.READ, "")
                // etcd's own permission for alice matters for what the nodes forward; what she watches and
                // reads through a node is the policy's to say.
                .user(ALICE, secrets.getProperty("etcd." + ALICE), Permission.Type.READ, ALICE_PREFIXES.get(0));
    }

    /** Keeps the started etcd, whose client certificate the tier's parts use. */
    void etcdStarted(EtcdServer etcd) {
        this.etcd = etcd;
    }

    /** The etcd root password, for the demo load. */
    String etcdRootPassword() {
        return secrets.getProperty("etcd.root");
    }

    /** Kafka with a SASL_SSL listener and the stack's users: the ingester, the nodes, kube-topics. */
    KafkaBroker.Builder kafka(KafkaBroker.Builder b) {
        return b.saslSsl(pki)
                .saslUser(KAFKA_INGESTER, secrets.getProperty("kafka." + KAFKA_INGESTER))
                .saslUser(KAFKA_NODE, secrets.getProperty("kafka." + KAFKA_NODE))
                .saslUser(KAFKA_KUBE_TOPICS, secrets.getProperty("kafka." + KAFKA_KUBE_TOPICS));
    }

    /** Writes the Kafka client settings of the ingester, the nodes and kube-topics ({@code --kafka-config}). */
    void kafkaStarted(KafkaBroker kafka) {
        ingesterKafkaConfig = kafka.writeSaslClientConfig(dir.resolve("kafka-ingester.properties"), KAFKA_INGESTER);
        nodeKafkaConfig = kafka.writeSaslClientConfig(dir.resolve("kafka-fanout.properties"), KAFKA_NODE);
        kubeTopicsKafkaConfig =
                kafka.writeSaslClientConfig(dir.resolve("kafka-kube-topics.properties"), KAFKA_KUBE_TOPICS);
    }

    /** The Kubernetes topics application's flags: Kafka over SASL_SSL as its own user. */
    List<String> kubeTopicsFlags() {
        return List.of("--kafka-config", kubeTopicsKafkaConfig.toString());
    }

    /** The ingester's flags: etcd over TLS as its user, Kafka over SASL_SSL, TLS on its port. */
    List<String> ingesterFlags() {
        List<String> f = new ArrayList<>(etcdClientFlags(INGESTER_ETCD_USER, etcdPasswordFile("ingester")));
        f.addAll(List.of(
                "--kafka-config",
                ingesterKafkaConfig.toString(),
                "--tls-cert-file",
                serverCert.cert().toString(),
                "--tls-key-file",
                serverCert.key().toString()));
        return f;
    }

    /** A fan-out node's flags: TLS, authentication, the policy, and its own etcd and Kafka credentials. */
    List<String> nodeFlags() {
        List<String> f = new ArrayList<>(etcdClientFlags(NODE_ETCD_USER, etcdPasswordFile("node")));
        f.addAll(List.of(
                "--kafka-config",
                nodeKafkaConfig.toString(),
                "--tls-cert-file",
                serverCert.cert().toString(),
                "--tls-key-file",
                serverCert.key().toString(),
                "--client-ca-file",
                pki.caCert().toString(),
                "--client-cert-auth",
                "--token-auth-file",
                dir.resolve("tokens.csv").toString(),
                "--etcd-user-auth",
                "--authz",
                "file:" + dir.resolve("policy.json")));
        return f;
    }

    private List<String> etcdClientFlags(String user, Path passwordFile) {
        return List.of(
                "--etcd-cacert",
                etcd.caCert().toString(),
                "--etcd-cert",
                etcd.clientCert().cert().toString(),
                "--etcd-key",
                etcd.clientCert().key().toString(),
                "--etcd-user",
                user,
                "--etcd-password-file",
                passwordFile.toString());
    }

    /** etcd's client certificate (etcd requires one of every client). */
    Pki.Issued etcdClientCert() {
        return etcd.clientCert();
    }

    /** A TLS context trusting the stack's CA, for the readiness polls. */
    SSLContext probes() {
        return TlsClientContext.of(pki.caCert(), null);
    }
}
