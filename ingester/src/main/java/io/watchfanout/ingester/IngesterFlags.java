package io.watchfanout.ingester;

import com.google.protobuf.ByteString;
import io.watchfanout.common.Check;
import io.watchfanout.common.CommonFlags;
import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.Flag;
import io.watchfanout.common.FlagTable;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.common.KeyBytes;
import io.watchfanout.ingester.publish.DigestSchedule;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.TypeConversionException;

/**
 * The ingester's flags (README.md, "Command line", "Ingester"): the one definition of each
 * flag's name, default, unit, range and help, from which {@link IngesterMain}'s {@code --help},
 * the {@code WATCHFANOUT_*} variables and the checks of {@link IngesterConfig}'s values come.
 *
 * <p>Immutable and thread-safe.
 */
public final class IngesterFlags extends FlagTable {
    /** Kafka's and the topics' "broker default" for replication settings. */
    private static final int BROKER_DEFAULT = -1;
    /**
     * The smallest {@code --max-record-bytes}: a record holds an etcd value twice (with prev_kv)
     * plus its key, so a smaller limit would refuse ordinary values.
     */
    private static final int MIN_RECORD_BYTES = 64 * 1024;
    /**
     * etcd leases are whole seconds and leadership ends a third of a TTL before the lease
     * ({@code LeaderElection} refuses less too): below 2 s no time is left to publish in.
     */
    private static final Duration MIN_LEASE_TTL = Duration.ofSeconds(2);
    /** A floor against typos such as {@code 1ms}: heartbeats and probes that often would load etcd and Kafka for nothing. */
    private static final Duration MIN_PROBE_PERIOD = Duration.ofMillis(100);

    /** Kafka's compression codecs ({@code compression.type} of a producer). */
    private static final Set<String> CODECS = Set.of("none", "gzip", "snappy", "lz4", "zstd");

    private static final Check<Integer> REPLICAS =
            Check.of("-1 or >= 1", n -> n == BROKER_DEFAULT || n >= 1 && n <= Short.MAX_VALUE);

    static final Flag<List<String>> ETCD_ENDPOINTS = CommonFlags.etcdEndpoints()
            .defaultText("required unless --no-publisher")
            .help("etcd client URLs, comma-separated, e.g. http://127.0.0.1:2379; host:port means http://host:port.");
    static final Flag<String> KAFKA_BOOTSTRAP =
            CommonFlags.kafkaBootstrap().required().help("Kafka bootstrap servers, e.g. 127.0.0.1:9092.");
    static final Flag<String> TOPIC_PREFIX =
            CommonFlags.topicPrefix().required().help("Topics are <NAME>.events and <NAME>.state.");
    static final Flag<ByteString> KEY_PREFIX = Flag.of(
                    "--key-prefix", "BYTES", ByteString.class, IngesterFlags::keyBytes)
            .defaultText("every key")
            .unit("percent-encoded bytes")
            .help("Publish only etcd keys with this prefix (percent-encoded bytes; %00 is a zero byte).");
    static final Flag<Integer> HTTP_PORT = Flag.integer("--http-port", "PORT")
            .defaultValue("9100")
            .unit("TCP port")
            .check(Check.between(-1, 65535))
            .help("Port of /metrics, /readyz and /livez; 0 picks a free port, -1 disables.");
    static final Flag<String> HTTP_HOST = Flag.text("--http-host", "ADDRESS")
            .defaultValue("0.0.0.0")
            .unit("IP address")
            .help("Address of the operations endpoints.");
    static final Flag<String> TRANSACTIONAL_ID = Flag.text("--transactional-id", "ID")
            .defaultText("<topic-prefix>.ingester")
            .help("The ingester's identity in Kafka; a second ingester with the same id fences the first.");
    static final Flag<Duration> EVENTS_RETENTION = Flag.duration("--events-retention")
            .defaultValue("7d")
            .help("retention.ms of a newly created events topic.");
    static final Flag<Integer> MAX_RECORD_BYTES = Flag.byteSize("--max-record-bytes")
            .defaultValue("8MiB")
            .check(Check.of(">= 64KiB", n -> n >= MIN_RECORD_BYTES))
            .help("Largest record (max.message.bytes of the topics); must hold etcd's largest value twice (prev_kv).");
    static final Flag<Integer> STATE_PARTITIONS = Flag.integer("--state-partitions", "N")
            .defaultValue("1")
            .unit("partitions")
            .check(Check.atLeast(1))
            .help("Partitions of a newly created state topic.");
    static final Flag<Integer> REPLICATION_FACTOR = Flag.integer("--replication-factor", "N")
            .defaultValue("-1")
            .unit("replicas")
            .check(REPLICAS)
            .help("Replication factor of newly created topics, and the least an existing topic must have (the ingester "
                    + "refuses to start otherwise); -1 for the broker's default.");
    static final Flag<Integer> MIN_INSYNC_REPLICAS = Flag.integer("--min-insync-replicas", "N")
            .defaultValue("-1")
            .unit("replicas")
            .check(REPLICAS)
            .help(
                    "min.insync.replicas of newly created topics, and the least an existing topic must have: replicas that "
                            + "must hold a write before Kafka acknowledges it (the ingester writes with acks=all). Production: 2 with "
                            + "--replication-factor 3. -1 for the broker's default.");
    static final Flag<Duration> TRANSACTION_TIMEOUT = Flag.duration("--transaction-timeout")
            .defaultValue("60s")
            .help(
                    "transaction.timeout.ms: an open transaction stalls read_committed readers for at most this long after "
                            + "a crash.");
    static final Flag<Integer> WATCH_QUEUE_BYTES = Flag.byteSize("--watch-queue-bytes")
            .defaultValue("64MiB")
            .help("Bound of etcd data waiting for Kafka; beyond it the watch is closed and resumed later from the last "
                    + "published revision.");
    static final Flag<Integer> MAX_BATCH_RECORDS = Flag.integer("--max-batch-records", "N")
            .defaultValue("5000")
            .unit("records")
            .check(Check.atLeast(1))
            .help("Records per Kafka transaction before it is cut between two revisions.");
    static final Flag<Integer> ETCD_MAX_INBOUND_BYTES = Flag.byteSize("--etcd-max-inbound-bytes")
            .defaultValue("512MiB")
            .help("Largest gRPC message accepted from etcd (a large transaction or a catch-up arrives as one).");
    static final Flag<Integer> SNAPSHOT_PAGE_SIZE = Flag.integer("--snapshot-page-size", "N")
            .defaultValue("1000")
            .unit("keys")
            .check(Check.atLeast(1))
            .help("Keys per etcd range request of an initial load or resync.");
    static final Flag<Integer> INITIAL_HISTORY_REVISIONS = Flag.integer("--initial-history-revisions", "N")
            .defaultValue("100000")
            .unit("revisions")
            .check(Check.atLeast(0))
            .help("On an empty events topic, publish etcd's state as of the oldest revision it still holds (its "
                    + "compaction revision, or the first) and every event since, so that the topic's history starts "
                    + "where etcd's does; but start at most N revisions before etcd's current one: etcd reads a "
                    + "watch's whole catch-up into memory at once, and one never compacted may hold a long history. "
                    + "0 publishes the current state only.");
    static final Flag<Boolean> PUBLISHER = Flag.toggle("--publisher")
            .defaultValue("true")
            .help("Watch etcd and publish to the events topic. --no-publisher runs only the state materializer, "
                    + "which needs Kafka alone: the production layout runs it so, as a process of its own beside "
                    + "ingesters started with --no-materializer.");
    static final Flag<Boolean> MATERIALIZER = Flag.toggle("--materializer")
            .defaultValue("true")
            .help("Run the state materializer (Kafka Streams) in this process; it keeps the state topic that fan-out "
                    + "nodes rebuild from, so some process must run it.");
    static final Flag<Duration> RETRY_BACKOFF_MAX = Flag.duration("--retry-backoff-max")
            .defaultValue("5s")
            .help("Longest wait between retries of etcd or Kafka.");
    static final Flag<Boolean> LEADER_ELECTION = Flag.toggle("--leader-election")
            .defaultValue("false")
            .help("Elect one publishing replica through etcd's election API; the others wait.");
    static final Flag<String> ELECTION_NAME = Flag.text("--election-name", "KEY")
            .defaultText("/watchfanout/elections/<topic-prefix>/ingester")
            .unit("etcd key")
            .help("etcd key prefix of the election.");
    static final Flag<Duration> ELECTION_LEASE_TTL = Flag.duration("--election-lease-ttl")
            .defaultValue("10s")
            .check(Check.atLeast(MIN_LEASE_TTL))
            .help("Lease time-to-live of the election: how long a dead leader delays the next one.");
    static final Flag<Duration> HEARTBEAT_INTERVAL = Flag.duration("--heartbeat-interval")
            .defaultValue("1s")
            .check(Check.atLeast(MIN_PROBE_PERIOD))
            .help(
                    "After this long without a record, publish a heartbeat (a progress record at the last revision) so that "
                            + "fan-out nodes tell an idle etcd from a dead feed.");
    static final Flag<Duration> DIGEST_INTERVAL = Flag.duration("--digest-interval")
            .defaultValue("10m")
            .check(Check.of(
                    "0 (no digests) or at least 1s", d -> d.isZero() || d.compareTo(Duration.ofSeconds(1)) >= 0))
            .help("Every this long (from the end of the last one), read a digest of the watched range from etcd at the "
                    + "last published revision (key count and a hash, whole and per 1000 keys) and publish it in a "
                    + "progress record: fan-out nodes and consumers compare what they read with it. 0: no digests.");
    static final Flag<Integer> DIGEST_PAGE_SIZE = Flag.integer("--digest-page-size", "N")
            .defaultValue("1000")
            .unit("keys")
            .check(Check.atLeast(1))
            .help("Keys per etcd range request of a digest.");
    static final Flag<Duration> DIGEST_PAGE_PAUSE = Flag.duration("--digest-page-pause")
            .defaultValue("20ms")
            .help("Pause between two range requests of a digest, so that etcd barely notices it.");
    static final Flag<Duration> DEPENDENCY_TIMEOUT = Flag.duration("--dependency-timeout")
            .defaultValue("3s")
            .check(Check.atLeast(MIN_PROBE_PERIOD))
            .help("etcd and Kafka are probed every second; one that does not answer within this makes the ingester not "
                    + "ready.");
    static final CommonFlags.EtcdFlags ETCD_SECURITY = CommonFlags.etcdSecurityFlags(
            "etcd user of every call to etcd (watch, reads, leader election), as etcdctl --user; with "
                    + "--etcd-password-file. It needs read permission on every key (the ingester watches the whole "
                    + "keyspace), and write on --election-name with --leader-election. jetcd renews its token.");
    static final Flag<KafkaClientSettings> KAFKA_CONFIG = CommonFlags.kafkaConfig()
            .help("Kafka client settings for every Kafka client of the ingester (publisher, readers, admin, state "
                    + "materializer): security, ssl, sasl and tuning keys, e.g. security.protocol=SASL_SSL; settings the "
                    + "ingester sets itself (bootstrap.servers, serializers, transactional.id, ...) are refused.");
    static final Flag<Path> TLS_CERT_FILE = CommonFlags.tlsCertFile()
            .help("PEM certificate chain (the ingester's certificate first) of TLS on the operations port; with "
                    + "--tls-key-file. Reloaded when the file changes: new connections get the new certificate.");
    static final Flag<Path> TLS_KEY_FILE =
            CommonFlags.tlsKeyFile().help("Private key of --tls-cert-file, unencrypted PKCS#8 PEM; reloaded with it.");
    static final Flag<Path> CLIENT_CA_FILE = CommonFlags.clientCaFile()
            .help("PEM bundle of CAs: with it, the operations port requires a client certificate signed by one of "
                    + "them (mutual TLS); any other is refused in the handshake. Reloaded when the file changes.");
    static final Flag<String> COMPRESSION = Flag.text("--compression", "CODEC")
            .defaultValue("lz4")
            .unit("codec")
            .check(Check.of("none, gzip, snappy, lz4 or zstd", CODECS::contains))
            .help("compression.type of the records the ingester and its state materializer write; none spends no CPU "
                    + "on it, zstd writes the fewest bytes.");

    /** The table in {@code --help}'s order; picocli makes it through {@code @Command(modelTransformer)}. */
    public IngesterFlags() {
        super(
                DefaultStyle.SENTENCE,
                ETCD_ENDPOINTS,
                KAFKA_BOOTSTRAP,
                TOPIC_PREFIX,
                KEY_PREFIX,
                HTTP_PORT,
                HTTP_HOST,
                TRANSACTIONAL_ID,
                EVENTS_RETENTION,
                MAX_RECORD_BYTES,
                STATE_PARTITIONS,
                REPLICATION_FACTOR,
                MIN_INSYNC_REPLICAS,
                TRANSACTION_TIMEOUT,
                WATCH_QUEUE_BYTES,
                MAX_BATCH_RECORDS,
                ETCD_MAX_INBOUND_BYTES,
                SNAPSHOT_PAGE_SIZE,
                INITIAL_HISTORY_REVISIONS,
                PUBLISHER,
                MATERIALIZER,
                RETRY_BACKOFF_MAX,
                LEADER_ELECTION,
                ELECTION_NAME,
                ELECTION_LEASE_TTL,
                HEARTBEAT_INTERVAL,
                DIGEST_INTERVAL,
                DIGEST_PAGE_SIZE,
                DIGEST_PAGE_PAUSE,
                DEPENDENCY_TIMEOUT,
                ETCD_SECURITY.cacert(),
                ETCD_SECURITY.cert(),
                ETCD_SECURITY.key(),
                ETCD_SECURITY.user(),
                ETCD_SECURITY.passwordFile(),
                KAFKA_CONFIG,
                TLS_CERT_FILE,
                TLS_KEY_FILE,
                CLIENT_CA_FILE,
                COMPRESSION);
    }

    /**
     * The ingester configuration from the flags {@code spec} parsed.
     *
     * @throws CommandLine.ParameterException for a missing flag, a value outside its range, or
     *     more in-sync replicas than replicas
     */
    static IngesterConfig config(CommandSpec spec) {
        Values v = new IngesterFlags().values(spec);
        int replicationFactor = v.get(REPLICATION_FACTOR);
        int minInsyncReplicas = v.get(MIN_INSYNC_REPLICAS);
        // More in-sync replicas than replicas: Kafka would refuse every acks=all write.
        if (replicationFactor != BROKER_DEFAULT && minInsyncReplicas > replicationFactor) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    MIN_INSYNC_REPLICAS + ": " + minInsyncReplicas + " (expected: <= " + REPLICATION_FACTOR + " "
                            + replicationFactor + ")");
        }
        boolean publisher = v.get(PUBLISHER);
        List<String> etcdEndpoints = v.get(ETCD_ENDPOINTS);
        if (!publisher && !v.get(MATERIALIZER)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    negated(PUBLISHER) + " and " + negated(MATERIALIZER)
                            + " leave nothing to run (expected: at most one of them)");
        }
        if (publisher && (etcdEndpoints == null || etcdEndpoints.isEmpty())) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "Missing required option " + ETCD_ENDPOINTS + " (or environment variable "
                            + EnvironmentDefaults.variableFor(ETCD_ENDPOINTS.name()) + "), unless "
                            + negated(PUBLISHER));
        }
        if (etcdEndpoints == null) {
            etcdEndpoints = List.of();
        }
        String topicPrefix = v.get(TOPIC_PREFIX);
        ByteString keyPrefix = v.get(KEY_PREFIX);
        String transactionalId = v.get(TRANSACTIONAL_ID);
        String electionName = v.get(ELECTION_NAME);
        KafkaClientSettings kafkaSettings = v.get(KAFKA_CONFIG);
        return new IngesterConfig(
                new IngesterConfig.Etcd(
                        etcdEndpoints,
                        keyPrefix == null ? ByteString.EMPTY : keyPrefix,
                        CommonFlags.etcdSecurity(spec, v, ETCD_SECURITY, etcdEndpoints),
                        v.get(ETCD_MAX_INBOUND_BYTES),
                        v.get(WATCH_QUEUE_BYTES)),
                new IngesterConfig.Kafka(
                        v.get(KAFKA_BOOTSTRAP),
                        kafkaSettings != null ? kafkaSettings : KafkaClientSettings.NONE,
                        topicPrefix,
                        v.get(MAX_RECORD_BYTES),
                        v.get(COMPRESSION)),
                new IngesterConfig.Topics(
                        v.get(EVENTS_RETENTION), v.get(STATE_PARTITIONS), (short) replicationFactor, minInsyncReplicas),
                new IngesterConfig.History(v.get(INITIAL_HISTORY_REVISIONS), v.get(SNAPSHOT_PAGE_SIZE)),
                new IngesterConfig.Commit(
                        transactionalId != null ? transactionalId : topicPrefix + ".ingester",
                        v.get(TRANSACTION_TIMEOUT),
                        v.get(MAX_BATCH_RECORDS),
                        v.get(HEARTBEAT_INTERVAL)),
                new IngesterConfig.Roles(
                        publisher,
                        v.get(MATERIALIZER),
                        v.get(LEADER_ELECTION),
                        electionName != null ? electionName : "/watchfanout/elections/" + topicPrefix + "/ingester",
                        v.get(ELECTION_LEASE_TTL)),
                new IngesterConfig.Recovery(v.get(RETRY_BACKOFF_MAX), v.get(DEPENDENCY_TIMEOUT)),
                new IngesterConfig.Operations(
                        v.get(HTTP_HOST),
                        v.get(HTTP_PORT),
                        CommonFlags.tlsFiles(spec, v, TLS_CERT_FILE, TLS_KEY_FILE, CLIENT_CA_FILE)),
                new DigestSchedule.Settings(v.get(DIGEST_INTERVAL), v.get(DIGEST_PAGE_SIZE), v.get(DIGEST_PAGE_PAUSE)));
    }

    /** A toggle's off form, e.g. {@code --no-publisher}. */
    private static String negated(Flag<Boolean> toggle) {
        return "--no-" + toggle.name().substring("--".length());
    }

    private static ByteString keyBytes(String text) {
        try {
            return ByteString.copyFrom(KeyBytes.decode(text));
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
