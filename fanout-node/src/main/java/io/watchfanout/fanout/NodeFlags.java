package io.watchfanout.fanout;

import io.watchfanout.common.Check;
import io.watchfanout.common.CommonFlags;
import io.watchfanout.common.Flag;
import io.watchfanout.common.FlagTable;
import io.watchfanout.fanout.http.CorsOrigins;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The fan-out node's flags (README.md, "Command line", "Fan-out node"): the one definition of
 * each flag's name, default, unit, range and help, from which {@link FanoutNodeMain}'s
 * {@code --help}, the {@code WATCHFANOUT_*} variables and the checks of {@link NodeConfig}'s
 * values come.
 *
 * <p>Immutable and thread-safe.
 */
public final class NodeFlags extends FlagTable {
    /** The largest TCP port. */
    private static final int MAX_PORT = 65535;
    /** Linux's bounds of TCP_KEEPIDLE and TCP_KEEPINTVL (seconds) and of TCP_KEEPCNT, as the kernel takes them. */
    private static final int MAX_KEEPALIVE_SECONDS = 32767;

    private static final int MAX_KEEPALIVE_COUNT = 127;
    private static final Duration ONE_MS = Duration.ofMillis(1);

    static final Flag<String> KAFKA_BOOTSTRAP =
            CommonFlags.kafkaBootstrap().required().help("Kafka bootstrap servers, host:port[,host:port].");
    static final Flag<String> TOPIC_PREFIX =
            CommonFlags.topicPrefix().required().help("Topic prefix: reads <NAME>.state and <NAME>.events.");
    static final Flag<Integer> PORT = Flag.integer("--port", "PORT")
            .required()
            .unit("TCP port")
            .check(Check.between(0, MAX_PORT))
            .help("HTTP port, 0 for a free one.");
    static final Flag<String> BIND_ADDRESS = Flag.text("--bind-address", "ADDRESS")
            .defaultValue("127.0.0.1")
            .unit("IP address")
            .help("HTTP listen address.");
    static final Flag<String> NODE_ID = Flag.text("--node-id", "ID")
            .defaultText("<hostname>-<port>")
            .help("Id of this node in log lines and Kafka client ids.");
    static final Flag<Duration> BOOKMARK_INTERVAL = Flag.duration("--bookmark-interval")
            .defaultValue("5s")
            .check(Check.positive())
            .help("Period of BOOKMARK frames on watch streams with allowWatchBookmarks=true, and of the check that "
                    + "ends parked watchers fallen behind the history with 410.");
    static final Flag<Integer> HISTORY_MAX_EVENTS = Flag.integer("--history-max-events", "N")
            .defaultValue("100000")
            .unit("events")
            .check(Check.atLeast(1))
            .help("Events kept in the history window for resumes.");
    static final Flag<Duration> HISTORY_MAX_AGE = Flag.duration("--history-max-age")
            .defaultValue("10m")
            .check(Check.atLeast(ONE_MS))
            .help("Age after which events leave the history window.");
    static final Flag<Integer> DEEP_READ_MAX_READERS = Flag.integer("--deep-read-max-readers", "N")
            .defaultValue("8")
            .unit("reads")
            .check(Check.atLeast(0))
            .help("Reads of the events topic for watches from before the history window that run at once; a watch "
                    + "needing one more gets 429 TooManyRequests; 0 turns them off (such watches get 410 Expired).");
    static final Flag<Integer> DEEP_READ_MAX_BYTES = Flag.byteSize("--deep-read-max-bytes")
            .defaultValue("64MiB")
            .check(Check.atLeast(1))
            .help("Bytes of events one read of the events topic holds at most for its watchers (frames built for them "
                    + "come on top).");
    static final Flag<Duration> RESOURCE_VERSION_WAIT = Flag.duration("--resource-version-wait")
            .defaultValue("3s")
            .check(Check.atLeast(Duration.ZERO))
            .help("How long a request for a resourceVersion ahead of the node waits before 504 Timeout.");
    static final Flag<Integer> WATCHER_QUEUE_FRAMES = Flag.integer("--watcher-queue-frames", "N")
            .defaultValue("256")
            .unit("frames")
            .check(Check.atLeast(1))
            .help("Frames a live watcher may have waiting before it is parked and catches up from history.");
    static final Flag<Duration> SHUTDOWN_DRAIN = Flag.duration("--shutdown-drain")
            .defaultValue("5s")
            .check(Check.atLeast(Duration.ZERO))
            .help("On SIGTERM, how long open streams get to take their final frames.");
    static final Flag<Duration> STALLED_CLOSE_AFTER = Flag.duration("--stalled-close-after")
            .defaultValue("30s")
            .check(Check.atLeast(ONE_MS))
            .help(
                    "Once a watch stream has ended (an ERROR frame such as 410 Expired, timeoutSeconds, shutdown), how long "
                            + "its client gets to take the last frames before the connection is closed; a client that stopped reading "
                            + "does not hold a connection forever.");
    static final Flag<Duration> MAX_FEED_STALENESS = Flag.duration("--max-feed-staleness")
            .defaultValue("10s")
            .check(Check.atLeast(Duration.ZERO))
            .help("/readyz fails when the newest record from the ingester (events, progress, or the heartbeat it "
                    + "publishes every second while etcd is idle) is older than this: the ingester, Kafka or etcd stopped "
                    + "feeding the node. The node goes on serving what it has. 0 turns the check off.");
    static final Flag<Duration> WRITE_TIMEOUT = Flag.duration("--write-timeout")
            .defaultValue("30s")
            .check(Check.atLeast(ONE_MS))
            .help(
                    "How long a watch stream with frames waiting may go without its client's socket taking a byte, or with "
                            + "bytes in flight that the kernel retries without an acknowledgement, before the connection is closed "
                            + "and its watcher removed: a client gone without a FIN, or not reading at all; a slow reader keeps its "
                            + "stream.");
    static final Flag<Duration> TCP_KEEPALIVE_IDLE = Flag.duration("--tcp-keepalive-idle")
            .defaultValue("15s")
            .check(Check.wholeSeconds(1, MAX_KEEPALIVE_SECONDS))
            .help("TCP keepalive of client connections: time without a packet from the client before the first probe.");
    static final Flag<Duration> TCP_KEEPALIVE_INTERVAL = Flag.duration("--tcp-keepalive-interval")
            .defaultValue("5s")
            .check(Check.wholeSeconds(1, MAX_KEEPALIVE_SECONDS))
            .help("Time between TCP keepalive probes.");
    static final Flag<Integer> TCP_KEEPALIVE_COUNT = Flag.integer("--tcp-keepalive-count", "N")
            .defaultValue("3")
            .unit("probes")
            .check(Check.between(1, MAX_KEEPALIVE_COUNT))
            .help(
                    "Unanswered TCP keepalive probes after which a client connection is broken and its watch streams end; "
                            + "an idle connection to a vanished client goes after idle + count x interval.");
    static final Flag<Integer> ETCD_API_PORT = Flag.integer("--etcd-api-port", "PORT")
            .defaultValue("-1")
            .unit("TCP port")
            .check(Check.of("0..65535, or -1 for none", p -> p >= -1 && p <= MAX_PORT))
            .help("Port of etcd's v3 gRPC API on --bind-address: Watch and KV.Range are served from the cache, every "
                    + "other call is forwarded to --etcd-endpoints; 0 for a free one, -1 for none.");
    static final Flag<List<String>> ETCD_ENDPOINTS = CommonFlags.etcdEndpoints()
            .defaultText("none; those calls then answer UNAVAILABLE")
            .help("etcd client URLs, comma-separated (host:port means http://host:port): where the etcd API forwards "
                    + "what the cache does not serve and learns etcd's cluster id and current revision.");
    static final Flag<Duration> PROGRESS_NOTIFY_INTERVAL = Flag.duration("--progress-notify-interval")
            .defaultValue("10m")
            .check(Check.atLeast(ONE_MS))
            .help("etcd API: how long a watch with progress_notify goes without a response before it gets an empty one "
                    + "carrying the revision, as etcd's --experimental-watch-progress-notify-interval.");
    static final Flag<List<String>> CORS_ALLOWED_ORIGINS = Flag.list("--cors-allowed-origins", "ORIGINS", null)
            .defaultText("none; preflights get 403")
            .unit("origins (`scheme://host[:port]`), comma-separated, or `*`")
            .check(Check.by(CorsOrigins::of))
            .help("Origins whose pages may read /v1/* and etcd's JSON gateway /v3/* across origins (CORS, README.md "
                    + "\"Browsers\"), comma-separated, e.g. https://app.example.com,http://127.0.0.1:8080; * for any.");
    static final Flag<Path> TLS_CERT_FILE = CommonFlags.tlsCertFile()
            .help(
                    "PEM certificate chain (the node's certificate first) of TLS on both ports, HTTP and --etcd-api-port; "
                            + "with --tls-key-file. Reloaded when the file changes: new connections get the new certificate.");
    static final Flag<Path> TLS_KEY_FILE =
            CommonFlags.tlsKeyFile().help("Private key of --tls-cert-file, unencrypted PKCS#8 PEM; reloaded with it.");
    static final Flag<Path> CLIENT_CA_FILE = CommonFlags.clientCaFile()
            .help("PEM bundle of CAs: with it, both ports require a client certificate signed by one of them (mutual "
                    + "TLS); any other is refused in the handshake. Reloaded when the file changes.");
    static final Flag<Boolean> BENCH_ENCODE_PER_WATCHER = Flag.toggle("--bench-encode-per-watcher")
            .defaultValue("false")
            .hidden()
            .help(
                    "Benchmark only (bin/bench memo, docs/BENCHMARKS.md): live dispatch encodes a frame per watcher "
                            + "instead of once per event and encoding, to measure what encode-once saves. Never in production.");

    /** The table in {@code --help}'s order; picocli makes it through {@code @Command(modelTransformer)}. */
    public NodeFlags() {
        super(
                DefaultStyle.PARENTHESES,
                KAFKA_BOOTSTRAP,
                TOPIC_PREFIX,
                PORT,
                BIND_ADDRESS,
                NODE_ID,
                BOOKMARK_INTERVAL,
                HISTORY_MAX_EVENTS,
                HISTORY_MAX_AGE,
                DEEP_READ_MAX_READERS,
                DEEP_READ_MAX_BYTES,
                RESOURCE_VERSION_WAIT,
                WATCHER_QUEUE_FRAMES,
                SHUTDOWN_DRAIN,
                STALLED_CLOSE_AFTER,
                MAX_FEED_STALENESS,
                WRITE_TIMEOUT,
                TCP_KEEPALIVE_IDLE,
                TCP_KEEPALIVE_INTERVAL,
                TCP_KEEPALIVE_COUNT,
                ETCD_API_PORT,
                ETCD_ENDPOINTS,
                PROGRESS_NOTIFY_INTERVAL,
                CORS_ALLOWED_ORIGINS,
                TLS_CERT_FILE,
                TLS_KEY_FILE,
                CLIENT_CA_FILE,
                BENCH_ENCODE_PER_WATCHER);
    }

    /**
     * The node configuration from the flags {@code spec} parsed.
     *
     * @throws picocli.CommandLine.ParameterException for a missing flag or a value outside its range
     */
    static NodeConfig config(CommandSpec spec) {
        Values v = new NodeFlags().values(spec);
        int port = v.get(PORT);
        String id = v.get(NODE_ID);
        if (id == null || id.isBlank()) {
            id = hostName() + "-" + port;
        }
        return new NodeConfig(
                v.get(KAFKA_BOOTSTRAP),
                v.get(TOPIC_PREFIX),
                v.get(BIND_ADDRESS),
                port,
                id,
                v.get(BOOKMARK_INTERVAL),
                v.get(HISTORY_MAX_EVENTS),
                v.get(HISTORY_MAX_AGE),
                v.get(RESOURCE_VERSION_WAIT),
                v.get(WATCHER_QUEUE_FRAMES),
                v.get(SHUTDOWN_DRAIN),
                v.get(STALLED_CLOSE_AFTER),
                v.get(WRITE_TIMEOUT),
                v.get(TCP_KEEPALIVE_IDLE),
                v.get(TCP_KEEPALIVE_INTERVAL),
                v.get(TCP_KEEPALIVE_COUNT),
                v.get(MAX_FEED_STALENESS),
                v.get(ETCD_API_PORT),
                v.get(ETCD_ENDPOINTS),
                v.get(PROGRESS_NOTIFY_INTERVAL),
                v.get(CORS_ALLOWED_ORIGINS),
                v.get(DEEP_READ_MAX_READERS),
                v.get(DEEP_READ_MAX_BYTES),
                v.get(BENCH_ENCODE_PER_WATCHER),
                CommonFlags.tlsFiles(spec, v, TLS_CERT_FILE, TLS_KEY_FILE, CLIENT_CA_FILE));
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "node";
        }
    }
}
