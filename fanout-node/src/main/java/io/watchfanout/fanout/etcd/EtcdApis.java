package io.watchfanout.fanout.etcd;

import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.ServerServiceDefinition;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.EtcdSecurity;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.watch.WatchCore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Assembles the etcd API of a node from its configuration: the services served from the cache
 * (Watch, KV.Range), the forwarder, the channel to etcd, the metrics and the threads they share.
 * Stateless.
 */
public final class EtcdApis {
    /** Threads that run the etcd API's consistent reads, and lanes of its Watch streams. */
    private static final int THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());
    /** How often the headers' cluster id and raft term are refreshed from etcd (a leader change moves the term). */
    private static final long HEADER_REFRESH_SECONDS = 10;

    private EtcdApis() {}

    /** How long the node's {@code Auth/Authenticate} may take. */
    private static final Duration AUTHENTICATE_TIMEOUT = Duration.ofSeconds(10);

    /**
     * The node's channel to {@code endpoints} (URLs), for forwarding and consistent reads.
     *
     * @param security TLS of https endpoints ({@link EtcdChannel})
     * @throws IllegalArgumentException as {@link EtcdChannel#open}
     */
    public static ManagedChannel channel(List<String> endpoints, EtcdSecurity security) {
        return EtcdChannel.open(endpoints, security);
    }

    /** The node's etcd user for its own calls over {@code etcd} ({@link EtcdCredentials}); one per node, sharing its token. */
    public static EtcdCredentials credentials(Channel etcd, EtcdSecurity security) {
        return EtcdCredentials.of(etcd, security, AUTHENTICATE_TIMEOUT);
    }

    /**
     * {@code etcd} for calls the node makes as itself (reading etcd's roles for
     * {@code --authz=etcd}): each carries {@code credentials}, and a call etcd answers with
     * "invalid auth token" makes them authenticate again for the next one. Never for calls made
     * on behalf of a client.
     */
    public static Channel asNode(Channel etcd, EtcdCredentials credentials) {
        return io.grpc.ClientInterceptors.intercept(etcd, new io.grpc.ClientInterceptor() {
            @Override
            public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(
                    io.grpc.MethodDescriptor<Q, R> method, io.grpc.CallOptions options, Channel next) {
                return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<Q, R>(
                        next.newCall(method, options.withCallCredentials(credentials))) {
                    @Override
                    public void start(Listener<R> listener, io.grpc.Metadata headers) {
                        super.start(
                                new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(
                                        listener) {
                                    @Override
                                    public void onClose(io.grpc.Status status, io.grpc.Metadata trailers) {
                                        credentials.renewAfter(status.asRuntimeException());
                                        super.onClose(status, trailers);
                                    }
                                },
                                headers);
                    }
                };
            }
        });
    }

    /**
     * The etcd API of a node, not started.
     *
     * @param settings its port and timings, from the node's flags
     * @param etcd the channel to etcd, or null without {@code --etcd-endpoints}
     * @param credentials the node's user for its own calls ({@link #credentials}), or {@link
     *     EtcdCredentials#none()}
     * @param registry where its metrics are registered
     * @param access who may call what (README.md, "Security")
     */
    public static EtcdApi create(
            WatchCore core,
            EtcdApiSettings settings,
            Channel etcd,
            EtcdCredentials credentials,
            CollectorRegistry registry,
            AccessControl access) {
        return create(
                core,
                settings.bindAddress(),
                settings.port(),
                settings.nodeId(),
                etcd,
                credentials,
                settings.progressNotifyInterval(),
                settings.resourceVersionWait(),
                registry,
                access);
    }

    /**
     * As {@link #create(WatchCore, EtcdApiSettings, Channel, EtcdCredentials, CollectorRegistry, AccessControl)},
     * from the settings it uses.
     */
    static EtcdApi create(
            WatchCore core,
            String bindAddress,
            int port,
            String nodeId,
            Channel etcd,
            EtcdCredentials credentials,
            Duration progressNotifyInterval,
            Duration resourceVersionWait,
            CollectorRegistry registry,
            AccessControl access) {
        EtcdApiStats stats = new EtcdApiStats();
        stats.register(registry);
        EtcdHeaders headers = new EtcdHeaders(nodeId);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS, daemons("etcd-api-" + nodeId));
        ScheduledExecutorService timer =
                Executors.newSingleThreadScheduledExecutor(daemons("etcd-api-timer-" + nodeId));
        WatchLanes lanes = new WatchLanes("etcd-api-watch-" + nodeId, THREADS);
        ServerServiceDefinition watch =
                EtcdWatchService.definition(core, headers, stats, lanes, progressNotifyInterval, access);
        ServerServiceDefinition range = new EtcdRangeService(
                        core,
                        headers,
                        stats,
                        etcd,
                        etcd == null ? null : asNode(etcd, credentials),
                        resourceVersionWait,
                        pool,
                        access)
                .definition();
        if (etcd != null) {
            // etcd's cluster id and raft term for the headers, before any forwarded answer taught them.
            // A failed probe leaves the headers as they were; the next round tries again.
            EtcdRevisionProbe probe = new EtcdRevisionProbe(etcd, credentials, Duration.ofSeconds(5), headers);
            timer.scheduleWithFixedDelay(probe::current, 0, HEADER_REFRESH_SECONDS, TimeUnit.SECONDS);
        }
        return new EtcdApi(
                bindAddress,
                port,
                nodeId,
                List.of(watch, range),
                new EtcdForwarder(etcd, stats.forwarded::increment, new ForwardedAccess(access), access.etcdTokens()),
                new EtcdAuth(access),
                lanes,
                () -> {
                    timer.shutdownNow();
                    lanes.shutdownNow();
                    pool.shutdownNow();
                });
    }

    private static ThreadFactory daemons(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
