package io.watchfanout.fanout.etcd;

import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.watchfanout.common.tls.ServerTls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd's v3 gRPC API on a port of the node (README.md, "etcd's v3 API"): the services served
 * from the cache, and a fallback that forwards every other call to etcd, so that a node is a
 * complete etcd endpoint for etcdctl, jetcd, Go's clientv3 and Node's etcd3.
 *
 * <p>With {@link #serveTls} the port speaks TLS (ALPN {@code h2}, as grpc clients require) with
 * {@link ServerTls}'s reloading key and trust managers: new handshakes get a rotated certificate,
 * and with client CAs a client without a certificate they signed is refused in the handshake.
 * The session of a call is {@code Grpc.TRANSPORT_ATTR_SSL_SESSION} of its attributes.
 *
 * <p>grpc-java on Netty, the grpc that jetcd brings. Thread-safety: start and stop from one
 * controlling thread; the services are called on grpc's threads.
 */
public final class EtcdApi {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdApi.class);
    /**
     * The largest metadata of a call the API takes: room for a JWT or an etcd token many times
     * over; more is refused by grpc before any interceptor runs.
     */
    static final int MAX_METADATA_BYTES = 16 * 1024;
    /** A connection's write buffer turns unwritable above this many bytes, writable again below the low mark. */
    private static final int WRITE_BUFFER_HIGH_BYTES = 1024 * 1024;

    private static final int WRITE_BUFFER_LOW_BYTES = 512 * 1024;
    /** The largest request message the API takes: above etcd's largest advised request (10 MiB). */
    public static final int MAX_REQUEST_BYTES = 16 * 1024 * 1024;

    private final String bindAddress;
    private final int requestedPort;
    private final String nodeId;
    private final List<ServerServiceDefinition> services;
    private final Runnable onStop;
    private final HandlerRegistry fallback;
    private final String inProcessName;
    private final ManagedChannel self;
    private final EtcdAuth auth;
    private final WatchLanes lanes;
    private Server server;
    private Server inProcess;
    private ServerTls tls;

    /**
     * @param bindAddress the listen address
     * @param port the port, 0 for a free one
     * @param nodeId the node's id, for log lines
     * @param services the services served by the node itself
     * @param fallback where calls to any other method go (forwarded to etcd)
     * @param auth authenticates the calls of the port and of the in-process server
     * @param lanes the threads of the Watch streams, whose event loops serve the port
     * @param onStop run once the server has stopped (the services' threads)
     */
    EtcdApi(
            String bindAddress,
            int port,
            String nodeId,
            List<ServerServiceDefinition> services,
            HandlerRegistry fallback,
            EtcdAuth auth,
            WatchLanes lanes,
            Runnable onStop) {
        this.auth = auth;
        this.lanes = lanes;
        this.bindAddress = bindAddress;
        this.requestedPort = port;
        this.nodeId = nodeId;
        this.services = List.copyOf(services);
        this.fallback = fallback;
        this.onStop = onStop;
        this.inProcessName = "watchfanout-etcd-api-" + nodeId + "-" + System.identityHashCode(this);
        this.self = InProcessChannelBuilder.forName(inProcessName).build();
    }

    /**
     * The JSON gateway over this API (etcd's {@code /v3/...} paths, for the node's HTTP port): it calls
     * the same services in process, so that its watches and ranges come from the cache too.
     */
    public JsonGateway gateway() {
        return new JsonGateway(self, auth);
    }

    /** Serves the port over TLS with {@code tls}; call before {@link #start()}. Without it, plaintext. */
    public void serveTls(ServerTls tls) {
        this.tls = Objects.requireNonNull(tls, "tls");
    }

    private static SslContext nettyTls(ServerTls tls) {
        SslContextBuilder b = GrpcSslContexts.configure(SslContextBuilder.forServer(tls.keyManager()));
        if (tls.asksForClientCertificates()) {
            b.trustManager(tls.trustManager())
                    .clientAuth(tls.clientAuthRequired() ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
        }
        try {
            return b.build();
        } catch (SSLException e) {
            throw new IllegalStateException("netty does not take the JDK's TLS (" + e.getMessage() + ")", e);
        }
    }

    private Server build(ServerBuilder<?> b, io.grpc.ServerInterceptor authentication) {
        // For every call, the fallback's too.
        b.intercept(authentication);
        b.fallbackHandlerRegistry(fallback);
        for (ServerServiceDefinition s : services) {
            // A request that is not the method's protobuf gets etcd's status, not grpc-java's logged UNKNOWN.
            b.addService(UnreadableRequests.guard(s));
        }
        return b.build();
    }

    /**
     * Binds the port and starts serving.
     *
     * @throws UncheckedIOException if the address cannot be bound (the message names it)
     */
    public void start() {
        GrpcStreamErrors.install();
        quietLeakDetection();
        NettyServerBuilder netty = NettyServerBuilder.forAddress(new InetSocketAddress(bindAddress, requestedPort));
        if (tls != null) {
            netty.sslContext(nettyTls(tls));
        }
        TransportClock.installOn(netty);
        server = build(
                lanes.serveOn(netty)
                        // Forwarded requests are etcd's to judge (its --max-request-bytes, up to the 10 MiB etcd
                        // advises, plus grpc's overhead): the node must take what an etcd may be configured to take.
                        .maxInboundMessageSize(MAX_REQUEST_BYTES)
                        .maxInboundMetadataSize(MAX_METADATA_BYTES)
                        // Netty's HTTP/2 flow controller hands the channel at most what it takes before turning
                        // unwritable, then goes round again when it turns writable: at its default 64 KiB, an
                        // event for 250 streams of a connection (~275 KiB) took five rounds through the stream
                        // distributor and the writability events, 12-19 % of the event loops' samples. The bytes
                        // waiting are bounded per stream anyway (EtcdWatchStream's ready threshold).
                        .withChildOption(
                                ChannelOption.WRITE_BUFFER_WATER_MARK,
                                new WriteBufferWaterMark(WRITE_BUFFER_LOW_BYTES, WRITE_BUFFER_HIGH_BYTES))
                        // The node's pool of transport buffers (TransportBuffers): each response in a buffer of its
                        // size, and memory that the node's metrics show.
                        .withChildOption(ChannelOption.ALLOCATOR, TransportBuffers.POOL)
                        // Clients such as clientv3 ping idle connections; etcd allows it every 5 s without streams.
                        .permitKeepAliveTime(5, TimeUnit.SECONDS)
                        .permitKeepAliveWithoutCalls(true),
                auth.transport());
        inProcess = build(InProcessServerBuilder.forName(inProcessName), auth.inProcess());
        try {
            inProcess.start();
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot listen on " + bindAddress + ":" + requestedPort + " (--etcd-api-port): " + e.getMessage(),
                    e);
        }
        LOG.info(
                "[node {}] serving etcd's v3 API on {}:{}{}",
                nodeId,
                bindAddress,
                port(),
                tls == null ? "" : " over TLS (" + (tls.clientAuthRequired() ? "mutual, " : "") + "h2)");
    }

    /**
     * Turns Netty's leak detection off unless {@code io.netty.leakDetection.level} asks for it: at its
     * default level every channel pipeline calls {@code touch} on every message it writes (one per
     * watch response), which cost the node a tenth of its event-loop time at 100,000 responses/s
     * (docs/BENCHMARKS.md, "The etcd API"). Set before the server accepts a channel, since a pipeline
     * reads the level when it is created.
     */
    private static void quietLeakDetection() {
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null) {
            io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
        }
    }

    /** The threads of its Watch streams (for tests). */
    WatchLanes lanes() {
        return lanes;
    }

    /** The bound port, once started. */
    public int port() {
        return server.getPort();
    }

    /** Stops accepting calls and ends the open ones, waiting up to {@code waitMillis}. */
    public void stop(long waitMillis) {
        if (server == null) {
            onStop.run();
            return;
        }
        self.shutdownNow();
        inProcess.shutdownNow();
        server.shutdown();
        try {
            if (!server.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        } finally {
            onStop.run();
        }
    }
}
