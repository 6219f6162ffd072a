package io.watchfanout.fanout.testing;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.fanout.etcd.EtcdApi;
import io.watchfanout.fanout.etcd.EtcdApiSettings;
import io.watchfanout.fanout.etcd.EtcdApis;
import io.watchfanout.fanout.etcd.EtcdCredentials;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.gateway.GatewayHandler;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.TcpKeepalive;
import io.watchfanout.fanout.v1.V1Api;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One core at revision 100 served by every front end on loopback, as a node assembles them:
 * the etcd API (with a plaintext channel to it), the HTTP API (with etcd's JSON gateway mounted
 * when asked), both checked by the same {@link AccessControl}; fed through {@link #feed}.
 */
public final class FrontEndNode implements AutoCloseable {
    public final WatchCore core;
    public final RecordFeed feed;
    public final EtcdApi grpc;
    public final HttpApi http;
    public final ManagedChannel channel;
    private final List<AutoCloseable> kept = new ArrayList<>();

    /**
     * Starts it all.
     *
     * @param ready whether the core serves (its rebuild is over)
     * @param timer whether the core's bookmark timer runs (else rounds run by {@code tickNow})
     * @param etcd the etcd API's settings (port 0)
     * @param httpSettings the HTTP API's settings
     * @param gateway whether etcd's JSON gateway is mounted on the HTTP API
     */
    public FrontEndNode(
            CoreSettings settings,
            boolean ready,
            boolean timer,
            AccessControl access,
            EtcdApiSettings etcd,
            HttpSettings httpSettings,
            boolean gateway) {
        core = new WatchCore(settings, new FrameEncoder());
        if (timer) {
            core.start();
        }
        core.feed().startAt(100);
        if (ready) {
            core.feed().markReady();
        }
        feed = new RecordFeed(core.feed(), 100);
        grpc = EtcdApis.create(core, etcd, null, EtcdCredentials.none(), new CollectorRegistry(), access);
        grpc.start();
        http = new HttpApi(core, httpSettings, new CollectorRegistry(), "127.0.0.1", 0);
        new V1Api(core, httpSettings, access, null).mountOn(http);
        if (gateway) {
            GatewayHandler.mountOn(
                    http,
                    grpc.gateway(),
                    core.readiness(),
                    httpSettings.writeTimeout(),
                    httpSettings.retryAfterSeconds());
        }
        http.start();
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", grpc.port())
                .usePlaintext()
                .build();
    }

    /**
     * HTTP settings for tests: {@code wait} for a future revision, {@code Retry-After} 1 s, a
     * stalled stream closed after 30 s, TCP keepalive 15 s idle and 3 probes 5 s apart.
     */
    public static HttpSettings httpSettings(Duration wait, String nodeId, Duration writeTimeout) {
        return new HttpSettings(
                wait,
                1,
                nodeId,
                Duration.ofSeconds(30),
                writeTimeout,
                new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3));
    }

    /** Closes {@code c} first when this closes (a test's clients, before the servers); returns it. */
    public <T extends AutoCloseable> T keep(T c) {
        kept.add(c);
        return c;
    }

    /** Closes what it {@link #keep}s, then stops the channel, both APIs and the core. */
    @Override
    public void close() throws IOException {
        for (AutoCloseable c : kept) {
            try {
                c.close();
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException("closing " + c, e);
            }
        }
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        http.stop();
        grpc.stop(1000);
        core.close();
    }
}
