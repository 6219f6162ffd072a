package io.watchfanout.fanout;

import io.watchfanout.common.Check;
import io.watchfanout.common.CommonFlags;
import io.watchfanout.common.Flag;
import io.watchfanout.common.FlagTable;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.fanout.security.SecurityConfig;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.transport.CorsOrigins;
import io.watchfanout.fanout.transport.TcpKeepalive;
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
    // 8 s: with the ingester's heartbeat every second and the feed checked every poll (0.1 s), a feed that
    // stops shows on /readyz within 10 s; and a hand-over to the standby after a crash (the election lease,
    // 5 s, and the new leader's start) mostly stays below it.
    static final Flag<Duration> MAX_FEED_STALENESS = Flag.duration("--max-feed-staleness")
            .defaultValue("8s")
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
    static final Flag<String> KUBE_PREFIX = Flag.text("--kube-prefix", "PREFIX")
            .defaultValue("/registry")
            .unit("etcd key prefix")
            .check(Check.of(
                    "starting with /, e.g. /registry", p -> p.startsWith("/") && p.length() > 1 && !p.contains("//")))
            .help("Where kube-apiserver keeps its objects in etcd (its --etcd-prefix): the Kubernetes API on the HTTP "
                    + "port (/api, /apis, /version) serves gets and lists of the objects under it.");
    // Security (README.md "Security", docs/SECURITY.md): authentication, authorization, limits.
    static final Flag<Boolean> ANONYMOUS = Flag.toggle("--anonymous")
            .defaultValue("false")
            .help("Serve requests without credentials as system:anonymous (group system:unauthenticated). A node "
                    + "needs this or an authentication method; without --authz, an anonymous-only node allows "
                    + "everything.");
    static final Flag<Boolean> CLIENT_CERT_AUTH = Flag.toggle("--client-cert-auth")
            .defaultValue("false")
            .help("Authenticate clients by the certificate they presented (needs --client-ca-file): the identity is "
                    + "its common name (as etcd's --client-cert-auth).");
    static final Flag<Path> TOKEN_AUTH_FILE = Flag.path("--token-auth-file", "FILE")
            .unit("path (CSV: token,user,uid[,\"group1,group2\"])")
            .help("Static bearer tokens in kube-apiserver's --token-auth-file format; reloaded when it changes.");
    static final Flag<Path> JWT_JWKS_FILE = Flag.path("--jwt-jwks-file", "FILE")
            .unit("path (JSON Web Key Set)")
            .help("Accept JWT bearer tokens signed by a key of this JWKS (RS256/ES256); needs --jwt-issuer and "
                    + "--jwt-audience; reloaded when it changes.");
    static final Flag<String> JWT_ISSUER = Flag.text("--jwt-issuer", "ISSUER").help("The iss claim a JWT must carry.");
    static final Flag<String> JWT_AUDIENCE =
            Flag.text("--jwt-audience", "AUDIENCE").help("A value the aud claim of a JWT must contain.");
    static final Flag<String> JWT_USERNAME_CLAIM = Flag.text("--jwt-username-claim", "CLAIM")
            .defaultValue("sub")
            .help("The JWT claim that names the identity.");
    static final Flag<String> JWT_GROUPS_CLAIM = Flag.text("--jwt-groups-claim", "CLAIM")
            .defaultValue("groups")
            .help("The JWT claim (a list of strings) that names the identity's groups.");
    static final Flag<Boolean> ETCD_USER_AUTH = Flag.toggle("--etcd-user-auth")
            .defaultValue("false")
            .help("Accept etcd's own users: Authenticate is forwarded to etcd and the token it returns is accepted "
                    + "(the identity is the etcd user); needs --etcd-endpoints.");
    static final Flag<List<String>> SERVICE_ACCOUNT_KEY_FILE = Flag.list("--service-account-key-file", "FILE", null)
            .unit("paths, comma-separated or repeated (PEM)")
            .defaultText("none")
            .help("Accept Kubernetes ServiceAccount tokens signed by a key of these PEM files (public keys, or "
                    + "private keys whose public half is used), as kube-apiserver's flag: user "
                    + "system:serviceaccount:<ns>:<name>; a token whose ServiceAccount, Pod or Secret is gone from "
                    + "the cache (or has another UID) is refused. Needs --service-account-issuer.");
    static final Flag<List<String>> SERVICE_ACCOUNT_ISSUER = Flag.list("--service-account-issuer", "ISSUER", null)
            .unit("URLs or names, comma-separated or repeated")
            .defaultText("none")
            .help("The iss claims of ServiceAccount tokens accepted (kube-apiserver's flag); legacy Secret-based "
                    + "tokens (kubernetes/serviceaccount) are accepted as well.");
    static final Flag<List<String>> API_AUDIENCES = Flag.list("--api-audiences", "AUDIENCES", null)
            .unit("comma-separated")
            .defaultText("--service-account-issuer")
            .help("Audiences a ServiceAccount token must name one of (kube-apiserver's flag).");
    static final Flag<List<String>> AUTHORIZATION_MODE = Flag.list("--authorization-mode", "MODES", null)
            .unit("Node, RBAC, AlwaysAllow, AlwaysDeny; comma-separated, in order")
            .defaultText("--authz, as /v1")
            .help("Authorize the Kubernetes API as kube-apiserver does, the first mode that allows deciding: RBAC "
                    + "from the Roles, ClusterRoles and bindings in the cache, Node for kubelets (system:node:<name>"
                    + " in system:nodes: their Node, pods and what the pods reference), AlwaysAllow only when "
                    + "named. A change of a binding, role or pod applies at once (a watch no longer allowed ends "
                    + "with a 403 ERROR event). Without --authz, /v1 and the etcd API then serve nobody.");
    static final Flag<Path> ENCRYPTION_PROVIDER_CONFIG = Flag.path("--encryption-provider-config", "FILE")
            .unit("path (EncryptionConfiguration, YAML or JSON)")
            .defaultText("none; encrypted values are undecodable")
            .help("kube-apiserver's encryption config: values it encrypted at rest (Secrets with aescbc, aesgcm, "
                    + "secretbox) are served decrypted by the Kubernetes API; one that cannot be opened (kms, a "
                    + "missing key, a failed tag) is a 500 for that object naming the key and provider. Reloaded "
                    + "when it changes.");
    static final Flag<Path> REQUESTHEADER_CLIENT_CA_FILE = Flag.path("--requestheader-client-ca-file", "FILE")
            .unit("path, PEM")
            .defaultText("none; no front proxy")
            .help("kube-apiserver's front proxy: a client certificate chaining to these CAs may name the user of "
                    + "the Kubernetes API's request in --requestheader-username-headers and its groups in "
                    + "--requestheader-group-headers. The HTTP port's handshake accepts them beside "
                    + "--client-ca-file's, whose certificates alone name their own users. Needs TLS.");
    static final Flag<List<String>> REQUESTHEADER_ALLOWED_NAMES = Flag.list(
                    "--requestheader-allowed-names", "NAMES", null)
            .unit("common names, comma-separated")
            .defaultText("any name")
            .help("The common names of front proxy certificates allowed to name users.");
    static final Flag<List<String>> REQUESTHEADER_USERNAME_HEADERS = Flag.list(
                    "--requestheader-username-headers", "HEADERS", null)
            .unit("header names, comma-separated")
            .defaultText("none")
            .help("Headers a front proxy names the user in, the first with a value winning, e.g. X-Remote-User; "
                    + "needed with --requestheader-client-ca-file.");
    static final Flag<List<String>> REQUESTHEADER_GROUP_HEADERS = Flag.list(
                    "--requestheader-group-headers", "HEADERS", null)
            .unit("header names, comma-separated")
            .defaultText("none")
            .help("Headers a front proxy names the user's groups in (every value), e.g. X-Remote-Group.");
    static final Flag<List<String>> REQUESTHEADER_EXTRA_HEADERS_PREFIX = Flag.list(
                    "--requestheader-extra-headers-prefix", "PREFIXES", null)
            .unit("header name prefixes, comma-separated")
            .defaultText("none")
            .help("Prefixes of the headers a front proxy puts the user's extra attributes in, e.g. "
                    + "X-Remote-Extra-; accepted as kube-apiserver's, read by no authorizer of the node.");
    static final Flag<List<String>> HTTP_AUTHN = Flag.list("--http-authn", "METHODS", null)
            .unit("cert, token, jwt, serviceaccount, etcd; comma-separated")
            .defaultText("every configured method")
            .help("The authentication methods of the HTTP port (and etcd's JSON gateway on it).");
    static final Flag<List<String>> ETCD_API_AUTHN = Flag.list("--etcd-api-authn", "METHODS", null)
            .unit("cert, token, jwt, serviceaccount, etcd; comma-separated")
            .defaultText("every configured method")
            .help("The authentication methods of the etcd API port.");
    static final Flag<String> AUTHZ = Flag.text("--authz", "POLICY")
            .check(Check.of("file:PATH or etcd", v -> v.equals("etcd") || (v.startsWith("file:") && v.length() > 5)))
            .help("Authorization: rules from a policy file (reloaded when it changes), or etcd's own roles and "
                    + "permissions, read with the node's credentials and refreshed. Default deny; required with "
                    + "any authentication method.");
    static final Flag<Duration> AUTHZ_ETCD_REFRESH = Flag.duration("--authz-etcd-refresh")
            .defaultValue("5s")
            .check(Check.atLeast(Duration.ofMillis(100)))
            .help("With --authz=etcd: how often etcd's auth revision is checked, and its roles read again when "
                    + "it moved.");
    static final Flag<Integer> MAX_WATCHERS = Flag.integer("--max-watchers", "N")
            .defaultValue("0")
            .unit("watches")
            .check(Check.atLeast(0))
            .help("Watches this node serves at most; beyond it new watches get 429 TooManyRequests with "
                    + "Retry-After (clients try another node). 0 = no limit.");
    static final Flag<Integer> MAX_WATCHERS_PER_IDENTITY = Flag.integer("--max-watchers-per-identity", "N")
            .defaultValue("0")
            .unit("watches")
            .check(Check.atLeast(0))
            .help("Watches one identity may have open on this node; beyond it 429 TooManyRequests. 0 = no limit.");
    static final Flag<Integer> WATCH_RATE_PER_IDENTITY = Flag.integer("--watch-rate-per-identity", "N")
            .defaultValue("0")
            .unit("watches per second")
            .check(Check.atLeast(0))
            .help("New watches one identity may open per second on average (token bucket); beyond it 429 "
                    + "TooManyRequests with the wait as Retry-After. 0 = no limit.");
    static final Flag<Integer> WATCH_BURST_PER_IDENTITY = Flag.integer("--watch-burst-per-identity", "N")
            .defaultText("--watch-rate-per-identity")
            .unit("watches")
            .check(Check.atLeast(1))
            .help("New watches one identity may open at once before --watch-rate-per-identity applies.");
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
    static final CommonFlags.EtcdFlags ETCD_SECURITY = CommonFlags.etcdSecurityFlags(
            "etcd user of the node's own calls to etcd (the revision probe of consistent reads, the refresh of "
                    + "the headers), as etcdctl --user; with --etcd-password-file. It needs read permission on the "
                    + "zero-byte key, which the probe counts. Calls forwarded for etcd API clients carry the client's "
                    + "own token instead.");
    static final Flag<KafkaClientSettings> KAFKA_CONFIG = CommonFlags.kafkaConfig()
            .help("Kafka client settings for every Kafka client of the node (the consumers of the rebuild, the tail "
                    + "and reads of older history; the admin client that reads the state topic's delete.retention.ms, "
                    + "which needs DescribeConfigs on it): "
                    + "security, ssl, sasl and tuning keys, e.g. security.protocol=SASL_SSL; settings the node sets itself "
                    + "(bootstrap.servers, deserializers, isolation.level, ...) are refused.");

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
                KUBE_PREFIX,
                TLS_CERT_FILE,
                TLS_KEY_FILE,
                CLIENT_CA_FILE,
                ANONYMOUS,
                CLIENT_CERT_AUTH,
                TOKEN_AUTH_FILE,
                JWT_JWKS_FILE,
                JWT_ISSUER,
                JWT_AUDIENCE,
                JWT_USERNAME_CLAIM,
                JWT_GROUPS_CLAIM,
                ETCD_USER_AUTH,
                SERVICE_ACCOUNT_KEY_FILE,
                SERVICE_ACCOUNT_ISSUER,
                API_AUDIENCES,
                AUTHORIZATION_MODE,
                ENCRYPTION_PROVIDER_CONFIG,
                REQUESTHEADER_CLIENT_CA_FILE,
                REQUESTHEADER_ALLOWED_NAMES,
                REQUESTHEADER_USERNAME_HEADERS,
                REQUESTHEADER_GROUP_HEADERS,
                REQUESTHEADER_EXTRA_HEADERS_PREFIX,
                HTTP_AUTHN,
                ETCD_API_AUTHN,
                AUTHZ,
                AUTHZ_ETCD_REFRESH,
                MAX_WATCHERS,
                MAX_WATCHERS_PER_IDENTITY,
                WATCH_RATE_PER_IDENTITY,
                WATCH_BURST_PER_IDENTITY,
                ETCD_SECURITY.cacert(),
                ETCD_SECURITY.cert(),
                ETCD_SECURITY.key(),
                ETCD_SECURITY.user(),
                ETCD_SECURITY.passwordFile(),
                KAFKA_CONFIG,
                BENCH_ENCODE_PER_WATCHER);
    }

    /**
     * The node configuration from the flags {@code spec} parsed, each part's settings by name.
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
        KafkaClientSettings kafkaSettings = v.get(KAFKA_CONFIG);
        return new NodeConfig(
                id,
                new NodeConfig.Core(
                        v.get(HISTORY_MAX_EVENTS),
                        v.get(HISTORY_MAX_AGE),
                        v.get(WATCHER_QUEUE_FRAMES),
                        v.get(BOOKMARK_INTERVAL),
                        v.get(RESOURCE_VERSION_WAIT),
                        v.get(SHUTDOWN_DRAIN)),
                new NodeConfig.Feed(
                        v.get(KAFKA_BOOTSTRAP),
                        v.get(TOPIC_PREFIX),
                        kafkaSettings != null ? kafkaSettings : KafkaClientSettings.NONE,
                        v.get(MAX_FEED_STALENESS),
                        v.get(DEEP_READ_MAX_READERS),
                        v.get(DEEP_READ_MAX_BYTES)),
                new NodeConfig.Http(
                        v.get(BIND_ADDRESS),
                        port,
                        v.get(STALLED_CLOSE_AFTER),
                        v.get(WRITE_TIMEOUT),
                        new TcpKeepalive(
                                v.get(TCP_KEEPALIVE_IDLE), v.get(TCP_KEEPALIVE_INTERVAL), v.get(TCP_KEEPALIVE_COUNT)),
                        v.get(CORS_ALLOWED_ORIGINS)),
                new NodeConfig.Etcd(
                        v.get(ETCD_ENDPOINTS), CommonFlags.etcdSecurity(spec, v, ETCD_SECURITY, v.get(ETCD_ENDPOINTS))),
                new NodeConfig.EtcdApi(v.get(ETCD_API_PORT), v.get(PROGRESS_NOTIFY_INTERVAL)),
                new NodeConfig.Kube(v.get(KUBE_PREFIX)),
                new NodeConfig.Security(
                        security(spec, v), CommonFlags.tlsFiles(spec, v, TLS_CERT_FILE, TLS_KEY_FILE, CLIENT_CA_FILE)));
    }

    /**
     * The benchmark-only knobs from the flags {@code spec} parsed (the hidden
     * {@code --bench-encode-per-watcher}); apart from {@link #config}, so that the node's
     * configuration holds only what production sets.
     */
    static BenchSettings benchSettings(CommandSpec spec) {
        return new BenchSettings(new NodeFlags().values(spec).get(BENCH_ENCODE_PER_WATCHER));
    }

    /**
     * The security settings, with the checks that span flags: a node needs an authentication
     * method or {@code --anonymous}; any authentication method needs {@code --authz}; a JWT
     * needs issuer and audience; the per-listener lists name configured methods.
     */
    private static SecurityConfig security(CommandSpec spec, Values v) {
        int rate = v.get(WATCH_RATE_PER_IDENTITY);
        Integer burst = v.get(WATCH_BURST_PER_IDENTITY);
        SecurityConfig c = new SecurityConfig(
                v.get(ANONYMOUS),
                v.get(CLIENT_CERT_AUTH),
                v.get(TOKEN_AUTH_FILE),
                new SecurityConfig.Jwt(
                        v.get(JWT_JWKS_FILE),
                        v.get(JWT_ISSUER),
                        v.get(JWT_AUDIENCE),
                        v.get(JWT_USERNAME_CLAIM),
                        v.get(JWT_GROUPS_CLAIM)),
                v.get(ETCD_USER_AUTH),
                v.get(HTTP_AUTHN),
                v.get(ETCD_API_AUTHN),
                v.get(AUTHZ),
                v.get(AUTHZ_ETCD_REFRESH),
                new WatchLimits(
                        v.get(MAX_WATCHERS), v.get(MAX_WATCHERS_PER_IDENTITY), rate, burst == null ? rate : burst),
                new SecurityConfig.Kubernetes(
                        v.get(SERVICE_ACCOUNT_KEY_FILE).stream().map(Path::of).toList(),
                        v.get(SERVICE_ACCOUNT_ISSUER),
                        v.get(API_AUDIENCES),
                        v.get(AUTHORIZATION_MODE),
                        v.get(ENCRYPTION_PROVIDER_CONFIG),
                        v.get(REQUESTHEADER_CLIENT_CA_FILE) == null
                                ? null
                                : new SecurityConfig.RequestHeaders(
                                        v.get(REQUESTHEADER_CLIENT_CA_FILE),
                                        v.get(REQUESTHEADER_ALLOWED_NAMES),
                                        v.get(REQUESTHEADER_USERNAME_HEADERS),
                                        v.get(REQUESTHEADER_GROUP_HEADERS),
                                        v.get(REQUESTHEADER_EXTRA_HEADERS_PREFIX))));
        String problem = c.problem(!v.get(ETCD_ENDPOINTS).isEmpty());
        if (problem == null && c.clientCertAuth() && v.get(CLIENT_CA_FILE) == null) {
            problem = "--client-cert-auth needs --client-ca-file (and --tls-cert-file, --tls-key-file): only a "
                    + "certificate TLS verified names a client";
        }
        if (problem == null && c.kubernetes().frontProxy() != null) {
            if (c.kubernetes().frontProxy().usernameHeaders().isEmpty()) {
                problem = "--requestheader-client-ca-file needs --requestheader-username-headers (e.g. X-Remote-User)";
            } else if (v.get(TLS_CERT_FILE) == null) {
                problem = "--requestheader-client-ca-file needs --tls-cert-file and --tls-key-file: the front proxy "
                        + "is known by its client certificate, which only a TLS handshake verifies";
            }
        }
        if (problem != null) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), problem);
        }
        return c;
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "node";
        }
    }
}
