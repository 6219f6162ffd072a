package io.watchfanout.localstack;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Settings of a local stack, validated across flags: every port (those of brokers 2 and on
 * included) in 1..65535 and distinct, at least one fan-out node with one etcd API port each.
 * Single values ({@code --kafka-brokers}, {@code --topic-prefix}, {@code --demo-rate},
 * {@code --start-timeout}) are checked by {@link StackFlags} when parsed.
 *
 * @param etcdPort etcd's client port ({@code http://127.0.0.1:<port>})
 * @param etcdPeerPort etcd's peer (Raft) port
 * @param kafkaPort the (first) Kafka broker's PLAINTEXT port ({@code 127.0.0.1:<port>})
 * @param kafkaControllerPort the (first) Kafka KRaft controller's port
 * @param kafkaBrokers how many Kafka brokers: 1, or 3 to 5 replicating every topic 3 times; broker
 *     {@code n} (from 1) listens on {@code kafkaPort + 2(n-1)} and {@code kafkaControllerPort + 2(n-1)}
 * @param ingesterPort the ingester's HTTP port ({@code /metrics}, {@code /readyz}, {@code /livez})
 * @param kubeTopicsPort the Kubernetes topics application's HTTP port ({@code /readyz}, {@code /metrics})
 * @param fanoutPorts the HTTP port of each fan-out node, one node per port
 * @param fanoutEtcdPorts the etcd API (gRPC) port of each fan-out node, in the order of {@code fanoutPorts}
 * @param balancerPort the load balancer's HTTP port, in front of every fan-out node's HTTP port
 *     (used when HAProxy is installed)
 * @param balancerEtcdPort the load balancer's etcd API port, in front of every node's etcd API port
 * @param dataDir where etcd and Kafka keep their data and every part its log, kept at exit;
 *     empty for a new temporary directory removed at exit
 * @param topicPrefix the topics are {@code <prefix>.events} and {@code <prefix>.state} (and those of
 *     the Kubernetes topics application, {@code <prefix>.k8s.*})
 * @param demo whether to run the demo load generator
 * @param demoRate the demo's writes per second
 * @param kubeTopics whether to run the Kubernetes topics application ({@code <prefix>.k8s.*} topics)
 * @param secure TLS and authentication everywhere, with a throwaway CA, certificates, tokens and
 *     a policy made under the data directory ({@code --secure}; docs/SECURITY.md)
 * @param startTimeout how long each part may take to become ready
 * @param ingesterJar the ingester's runnable jar
 * @param fanoutNodeJar the fan-out node's runnable jar
 * @param kubeTopicsJar the Kubernetes topics application's runnable jar
 */
public record StackConfig(
        int etcdPort,
        int etcdPeerPort,
        int kafkaPort,
        int kafkaControllerPort,
        int kafkaBrokers,
        int ingesterPort,
        int kubeTopicsPort,
        List<Integer> fanoutPorts,
        List<Integer> fanoutEtcdPorts,
        int balancerPort,
        int balancerEtcdPort,
        Optional<Path> dataDir,
        String topicPrefix,
        boolean demo,
        int demoRate,
        boolean kubeTopics,
        boolean secure,
        Duration startTimeout,
        Path ingesterJar,
        Path fanoutNodeJar,
        Path kubeTopicsJar) {

    /**
     * Validates and copies the settings.
     *
     * @throws IllegalArgumentException naming the setting, its value and what was expected
     */
    public StackConfig {
        fanoutPorts = List.copyOf(fanoutPorts);
        fanoutEtcdPorts = List.copyOf(fanoutEtcdPorts);
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(topicPrefix, "topicPrefix");
        Objects.requireNonNull(startTimeout, "startTimeout");
        Objects.requireNonNull(ingesterJar, "ingesterJar");
        Objects.requireNonNull(fanoutNodeJar, "fanoutNodeJar");
        Objects.requireNonNull(kubeTopicsJar, "kubeTopicsJar");
        if (dataDir.isPresent() && dataDir.get().toString().isBlank()) {
            // Path.of("") is the working directory: the stack's data and logs would land there.
            throw new IllegalArgumentException("--data-dir: empty (expected: a directory, e.g. ./stack-data;"
                    + " leave the flag out for a temporary one)");
        }
        if (secure && kafkaBrokers > 1) {
            throw new IllegalArgumentException("--secure with --kafka-brokers " + kafkaBrokers
                    + " (expected: --kafka-brokers 1; the secured stack runs one SASL_SSL broker)");
        }
        if (fanoutPorts.isEmpty()) {
            throw new IllegalArgumentException("--fanout-ports: empty (expected: at least one port, e.g. 8081,8082)");
        }
        if (fanoutEtcdPorts.size() != fanoutPorts.size()) {
            throw new IllegalArgumentException("--fanout-etcd-ports: " + fanoutEtcdPorts.size() + " ports for "
                    + fanoutPorts.size() + " --fanout-ports (expected: one etcd API port per fan-out node)");
        }
        List<String> names = new ArrayList<>(List.of("--etcd-port", "--etcd-peer-port"));
        List<Integer> ports = new ArrayList<>(List.of(etcdPort, etcdPeerPort));
        for (int i = 0; i < kafkaBrokers; i++) {
            String which = i == 0 ? "" : " (+" + 2 * i + " for broker " + (i + 1) + " of --kafka-brokers)";
            names.add("--kafka-port" + which);
            ports.add(kafkaPort + 2 * i);
            names.add("--kafka-controller-port" + which);
            ports.add(kafkaControllerPort + 2 * i);
        }
        names.add("--ingester-port");
        ports.add(ingesterPort);
        if (kubeTopics) {
            names.add("--kube-topics-port");
            ports.add(kubeTopicsPort);
        }
        for (int port : fanoutPorts) {
            names.add("--fanout-ports");
            ports.add(port);
        }
        for (int port : fanoutEtcdPorts) {
            names.add("--fanout-etcd-ports");
            ports.add(port);
        }
        names.add("--balancer-port");
        ports.add(balancerPort);
        names.add("--balancer-etcd-port");
        ports.add(balancerEtcdPort);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < ports.size(); i++) {
            int port = ports.get(i);
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException(names.get(i) + ": " + port + " (expected: a TCP port, 1..65535)");
            }
            if (!seen.add(port)) {
                throw new IllegalArgumentException(names.get(i) + ": port " + port + " is also used by "
                        + names.get(ports.indexOf(port)) + " (expected: a different port for every part)");
            }
        }
    }

    /**
     * The etcd client URL.
     *
     * @return {@code http://127.0.0.1:<etcdPort>}, {@code https://} with {@link #secure}
     */
    public String etcdUrl() {
        return (secure ? "https" : "http") + "://127.0.0.1:" + etcdPort;
    }

    /**
     * The scheme of the ingester's and the fan-out nodes' HTTP ports.
     *
     * @return {@code https} with {@link #secure}, else {@code http}
     */
    public String httpScheme() {
        return secure ? "https" : "http";
    }

    /**
     * The Kafka bootstrap servers: every broker, so that clients starting while one is down find
     * the others.
     *
     * @return {@code 127.0.0.1:<kafkaPort>}, then the other brokers' addresses comma-separated
     */
    public String kafkaBootstrap() {
        StringBuilder s = new StringBuilder();
        for (int port : kafkaPorts()) {
            s.append(s.length() == 0 ? "" : ",").append("127.0.0.1:").append(port);
        }
        return s.toString();
    }

    /**
     * The PLAINTEXT port of each Kafka broker, in node id order.
     *
     * @return {@code kafkaBrokers} ports, two apart from {@code kafkaPort} on
     */
    public List<Integer> kafkaPorts() {
        return spaced(kafkaPort);
    }

    /**
     * The KRaft controller port of each Kafka broker, in node id order.
     *
     * @return {@code kafkaBrokers} ports, two apart from {@code kafkaControllerPort} on
     */
    public List<Integer> kafkaControllerPorts() {
        return spaced(kafkaControllerPort);
    }

    /**
     * The replication factor of the topics the ingester creates, and of Kafka's own.
     *
     * @return 1 for a single broker, else 3
     */
    public int kafkaReplicationFactor() {
        return kafkaBrokers == 1 ? 1 : 3;
    }

    /**
     * The {@code min.insync.replicas} of the topics: how many brokers hold a write before Kafka
     * acknowledges it to an {@code acks=all} producer.
     *
     * @return 1 for a single broker, else 2
     */
    public int kafkaMinInsyncReplicas() {
        return kafkaBrokers == 1 ? 1 : 2;
    }

    private List<Integer> spaced(int first) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < kafkaBrokers; i++) {
            out.add(first + 2 * i);
        }
        return List.copyOf(out);
    }
}
