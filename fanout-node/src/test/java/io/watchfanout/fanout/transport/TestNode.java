package io.watchfanout.fanout.transport;

import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.metrics.NodeMetrics;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.v1.V1Api;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.schema.v1.EventsRecord;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/** A node without Kafka: the HTTP API over a core the test feeds with events-topic records. */
public final class TestNode implements AutoCloseable {
    public final EtcdLog etcd = new EtcdLog(100);
    public final WatchCore core;
    public final HttpApi api;
    public final RecordFeed applier;
    /** What {@code /metrics} serves. */
    public final CollectorRegistry registry;

    private final String bindAddress;
    private final String scheme;

    TestNode(int historyMaxEvents, int queueFrames, boolean ready) {
        this(historyMaxEvents, queueFrames, ready, Duration.ofSeconds(30));
    }

    /**
     * A node on 127.0.0.1 with one IO thread (a test can hold it to make frames wait), 200 ms
     * bookmarks, the production keepalive timings, and a write timeout of 10 minutes: clients of
     * tests that stop reading on purpose are not cut by it, whatever the machine's pace.
     *
     * @param stalledCloseAfter how long an ended stream's client gets to take its last frames
     */
    TestNode(int historyMaxEvents, int queueFrames, boolean ready, Duration stalledCloseAfter) {
        this(
                historyMaxEvents,
                queueFrames,
                ready,
                stalledCloseAfter,
                Duration.ofMinutes(10),
                new TcpKeepalive(Duration.ofSeconds(15), Duration.ofSeconds(5), 3),
                "127.0.0.1",
                Duration.ofMillis(200),
                CorsOrigins.NONE,
                null);
    }

    /**
     * As above, with a write timeout, keepalive timings, a listen address and a bookmark interval
     * of the test's own, serving pages of {@code corsOrigins} across origins, over HTTPS with
     * {@code tls} unless it is null.
     *
     * @param writeTimeout how long a stream with frames waiting may go without its socket taking a
     *     byte, and how long the kernel may retry a stream's bytes without an acknowledgement
     * @param bindAddress the address to listen on
     * @param bookmarkInterval how often a watch with allowWatchBookmarks=true gets a BOOKMARK
     */
    TestNode(
            int historyMaxEvents,
            int queueFrames,
            boolean ready,
            Duration stalledCloseAfter,
            Duration writeTimeout,
            TcpKeepalive keepalive,
            String bindAddress,
            Duration bookmarkInterval,
            CorsOrigins corsOrigins,
            ServerTls tls) {
        this.bindAddress = bindAddress;
        this.scheme = tls == null ? "http" : "https";
        core = new WatchCore(
                CoreSettings.of(historyMaxEvents, Duration.ofMinutes(10), queueFrames, "http-test")
                        .withBookmarkInterval(bookmarkInterval),
                new FrameEncoder());
        core.start();
        core.feed().startAt(100);
        if (ready) {
            core.feed().markReady();
        }
        applier = new RecordFeed(core.feed(), 100);
        registry = NodeMetrics.registry(core, null);
        api = new HttpApi(
                core,
                new HttpSettings(Duration.ofMillis(300), 1, "http-test", stalledCloseAfter, writeTimeout, keepalive),
                registry,
                bindAddress,
                0,
                1);
        new V1Api(core, api.settings(), AccessControl.open("http-test", WatchLimits.NONE), null).mountOn(api);
        api.allowOrigins(corsOrigins);
        if (tls != null) {
            api.serveTls(tls);
        }
        api.start();
    }

    public synchronized void feed(List<EventsRecord> records) {
        records.forEach(applier::accept);
    }

    public synchronized void feed(EventsRecord record) {
        applier.accept(record);
    }

    public URI uri(String pathAndQuery) {
        return URI.create(scheme + "://" + bindAddress + ":" + api.port() + pathAndQuery);
    }

    @Override
    public void close() {
        api.stop();
        core.close();
    }
}
