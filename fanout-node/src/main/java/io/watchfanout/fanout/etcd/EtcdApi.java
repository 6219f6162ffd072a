package io.watchfanout.fanout.etcd;

import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd's v3 gRPC API on a port of the node (README.md, "etcd's v3 API"): the services served
 * from the cache, and a fallback that forwards every other call to etcd, so that a node is a
 * complete etcd endpoint for etcdctl, jetcd, Go's clientv3 and Node's etcd3.
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
    private Server server;
    private Server inProcess;

    /**
     * @param bindAddress the listen address
     * @param port the port, 0 for a free one
     * @param nodeId the node's id, for log lines
     * @param services the services served by the node itself
     * @param fallback where calls to any other method go (forwarded to etcd)
     * @param auth authenticates the calls of the port and of the in-process server
     * @param onStop run once the server has stopped (the services' threads)
     */
    EtcdApi(
            String bindAddress,
            int port,
            String nodeId,
            List<ServerServiceDefinition> services,
            HandlerRegistry fallback,
            EtcdAuth auth,
            Runnable onStop) {
        this.auth = auth;
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

    private Server build(ServerBuilder<?> b, io.grpc.ServerInterceptor authentication) {
        // For every call, the fallback's too.
        b.intercept(authentication);
        b.fallbackHandlerRegistry(fallback);
        for (ServerServiceDefinition s : services) {
            b.addService(s);
        }
        return b.build();
    }

    /**
     * Binds the port and starts serving.
     *
     * @throws UncheckedIOException if the address cannot be bound (the message names it)
     */
    public void start() {
        server = build(
                NettyServerBuilder.forAddress(new InetSocketAddress(bindAddress, requestedPort))
                        // Forwarded requests are etcd's to judge (its --max-request-bytes, up to the 10 MiB etcd
                        // advises, plus grpc's overhead): the node must take what an etcd may be configured to take.
                        .maxInboundMessageSize(MAX_REQUEST_BYTES)
                        .maxInboundMetadataSize(MAX_METADATA_BYTES)
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
        LOG.info("[node {}] serving etcd's v3 API on {}:{}", nodeId, bindAddress, port());
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
