package io.watchfanout.localstack;

import io.watchfanout.common.Check;
import io.watchfanout.common.CommonFlags;
import io.watchfanout.common.Flag;
import io.watchfanout.common.FlagTable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The flags of {@code bin/local-stack} (README.md, "Command line"): the one definition of each
 * flag's name, default, unit, range and help, from which {@link LocalStackMain}'s {@code --help},
 * the {@code WATCHFANOUT_*} variables and the checks of single values come. Checks across flags
 * (every port distinct, one etcd API port per node, the ports of brokers 2 and on) are
 * {@link StackConfig}'s.
 *
 * <p>Immutable and thread-safe.
 */
public final class StackFlags extends FlagTable {
    /** A bound against typos: the demo is a trickle of changes to watch, not a load test (bin/bench is). */
    private static final int MAX_DEMO_RATE = 10_000;

    static final Flag<Integer> ETCD_PORT = Flag.integer("--etcd-port", "PORT")
            .defaultValue("2379")
            .unit("TCP port")
            .help("etcd client port: http://127.0.0.1:PORT.");
    static final Flag<Integer> ETCD_PEER_PORT = Flag.integer("--etcd-peer-port", "PORT")
            .defaultText("--etcd-port + 1, or the next port no other part uses")
            .unit("TCP port")
            .help("etcd peer (Raft) port.");
    static final Flag<Integer> KAFKA_PORT = Flag.integer("--kafka-port", "PORT")
            .defaultValue("9092")
            .unit("TCP port")
            .help("Kafka bootstrap port: 127.0.0.1:PORT; broker N of --kafka-brokers listens on PORT + 2(N-1).");
    static final Flag<Integer> KAFKA_CONTROLLER_PORT = Flag.integer("--kafka-controller-port", "PORT")
            .defaultText("--kafka-port + 1, or the next port no other part uses")
            .unit("TCP port")
            .help("Kafka KRaft controller port; broker N of --kafka-brokers uses PORT + 2(N-1).");
    /** Two brokers cannot both keep every acknowledged write on two of them and survive the loss of one. */
    static final Flag<Integer> KAFKA_BROKERS = Flag.integer("--kafka-brokers", "N")
            .defaultValue("1")
            .unit("brokers")
            .check(Check.of("1, or 3 to 5", n -> n == 1 || n >= 3 && n <= 5))
            .help(
                    "Kafka brokers: 1, or 3 to 5 for a replicated cluster as production runs it (every broker also a KRaft "
                            + "controller; topics with replication factor 3 and min.insync.replicas 2).");

    static final Flag<Integer> INGESTER_PORT = Flag.integer("--ingester-port", "PORT")
            .defaultValue("9100")
            .unit("TCP port")
            .help("Ingester HTTP port (/metrics, /readyz, /livez).");
    static final Flag<Integer> KUBE_TOPICS_PORT = Flag.integer("--kube-topics-port", "PORT")
            .defaultValue("8095")
            .unit("TCP port")
            .help("HTTP port of the Kubernetes topics application (/readyz, /metrics).");
    static final Flag<List<Integer>> FANOUT_PORTS = Flag.integers("--fanout-ports", "PORTS")
            .defaultValue("8081,8082")
            .unit("TCP ports, comma-separated")
            .help("HTTP ports of the fan-out nodes, comma-separated; one node per port.");
    static final Flag<List<Integer>> FANOUT_ETCD_PORTS = Flag.integers("--fanout-etcd-ports", "PORTS")
            .defaultValue("23791,23792")
            .unit("TCP ports, comma-separated")
            .help(
                    "Ports of the fan-out nodes' etcd v3 API (gRPC: etcdctl, jetcd, clientv3), one per --fanout-ports entry, "
                            + "in the same order; when not given, 23791, 23792 and on, one per node.");
    static final Flag<Integer> BALANCER_PORT = Flag.integer("--balancer-port", "PORT")
            .defaultValue("8080")
            .unit("TCP port")
            .help("HTTP port of the load balancer (HAProxy, when installed) in front of every fan-out node: one address"
                    + " for all of them, nodes checked on /readyz.");
    static final Flag<Integer> BALANCER_ETCD_PORT = Flag.integer("--balancer-etcd-port", "PORT")
            .defaultValue("23790")
            .unit("TCP port")
            .help("etcd API port of the load balancer, in front of every node's etcd API port.");
    static final Flag<Path> DATA_DIR = Flag.path("--data-dir", "DIR")
            .defaultText("a new temporary directory, removed at exit")
            .help("Keep the data of etcd and Kafka, and the logs, in DIR; a restart on the same DIR resumes.");
    static final Flag<String> TOPIC_PREFIX = CommonFlags.topicPrefix()
            .defaultValue("watch")
            .check(Check.of(
                    "letters, digits, '.', '_' or '-', as Kafka topic names allow", p -> p.matches("[A-Za-z0-9._-]+")))
            .help("Kafka topics are NAME.events and NAME.state.");
    static final Flag<Boolean> DEMO = Flag.optionalBoolean("--demo")
            .defaultValue("false")
            .unit("flag; `--demo=false` turns it off")
            .help("Also run a load generator writing Kubernetes objects under /registry/, encoded as kube-apiserver"
                    + " stores them.");
    static final Flag<Integer> DEMO_RATE =
            demoRate().help("Writes per second of --demo (etcd operations, a transaction counts once).");
    static final Flag<Boolean> KUBE_TOPICS = Flag.optionalBoolean("--kube-topics")
            .defaultValue("true")
            .unit("flag; `--kube-topics=false` turns it off")
            .help("Also run the Kubernetes topics application: the objects of NAME.events as watch events on"
                    + " NAME.k8s.<resource> and NAME.k8s-latest.<resource>.");
    static final Flag<Boolean> SECURE = Flag.optionalBoolean("--secure")
            .defaultValue("false")
            .unit("flag; `--secure=false` turns it off")
            .help("TLS and authentication everywhere: a throwaway CA, certificates, tokens and a policy under the "
                    + "data directory (docs/SECURITY.md); prints curl and etcdctl lines that work, and one refused. "
                    + "Kafka's SASL_SSL listener, which the tier uses, is on a free port shown in the table; --kafka-port "
                    + "stays the broker's own PLAINTEXT listener.");
    static final Flag<Duration> START_TIMEOUT = Flag.duration("--start-timeout")
            .defaultValue("120s")
            .check(Check.positive())
            .help("How long each part may take to become ready.");
    static final Flag<Path> INGESTER_JAR = Flag.path("--ingester-jar", "FILE")
            .defaultText("ingester/target/ingester.jar of this project")
            .help("The ingester's jar.");
    static final Flag<Path> FANOUT_NODE_JAR = Flag.path("--fanout-node-jar", "FILE")
            .defaultText("fanout-node/target/fanout-node.jar of this project")
            .help("The fan-out node's jar.");
    static final Flag<Path> KUBE_TOPICS_JAR = Flag.path("--kube-topics-jar", "FILE")
            .defaultText("kube-kafka/target/kube-topics.jar of this project")
            .help("The Kubernetes topics application's jar.");

    /** The table in {@code --help}'s order; picocli makes it through {@code @Command(modelTransformer)}. */
    public StackFlags() {
        super(
                DefaultStyle.SENTENCE,
                ETCD_PORT,
                ETCD_PEER_PORT,
                KAFKA_PORT,
                KAFKA_CONTROLLER_PORT,
                KAFKA_BROKERS,
                INGESTER_PORT,
                KUBE_TOPICS_PORT,
                FANOUT_PORTS,
                FANOUT_ETCD_PORTS,
                BALANCER_PORT,
                BALANCER_ETCD_PORT,
                DATA_DIR,
                TOPIC_PREFIX,
                DEMO,
                DEMO_RATE,
                KUBE_TOPICS,
                SECURE,
                START_TIMEOUT,
                INGESTER_JAR,
                FANOUT_NODE_JAR,
                KUBE_TOPICS_JAR);
    }

    /** {@code --demo-rate N}, as the local stack's demo and the stand-alone demo load take it; each adds its help. */
    public static Flag.Builder<Integer> demoRate() {
        return Flag.integer("--demo-rate", "N")
                .defaultValue("20")
                .check(Check.of("1.." + MAX_DEMO_RATE + " writes per second", n -> n >= 1 && n <= MAX_DEMO_RATE));
    }
}
