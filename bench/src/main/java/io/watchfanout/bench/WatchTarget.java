package io.watchfanout.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.HdrHistogram.Recorder;

/** W watchers of the load's prefix on one server: a fan-out node (HTTP) or etcd/grpc-proxy (jetcd). */
interface WatchTarget extends AutoCloseable {
    long deliveries();

    Recorder latency();

    @Override
    void close();

    /** HTTP watch streams on a fan-out node or the limit writer. */
    static WatchTarget http(
            int port, String prefix, int watchers, WatchLoadClient.Format format, int threads, int sampleEvery)
            throws IOException, InterruptedException {
        return streams(port, i -> "/v1/watch?key=" + prefix + "&prefix=true", watchers, format, threads, sampleEvery);
    }

    /** W HTTP watch streams, the i-th (from 0) on the request target {@code targets.apply(i)}. */
    static WatchTarget streams(
            int port,
            IntFunction<String> targets,
            int watchers,
            WatchLoadClient.Format format,
            int threads,
            int sampleEvery)
            throws IOException, InterruptedException {
        return streams(port, targets, i -> "", watchers, format, threads, sampleEvery);
    }

    /**
     * As {@link #streams(int, IntFunction, int, WatchLoadClient.Format, int, int)}, the i-th stream
     * sending the header lines {@code headers.apply(i)} (each ending in CRLF), e.g. its own bearer token.
     */
    static WatchTarget streams(
            int port,
            IntFunction<String> targets,
            IntFunction<String> headers,
            int watchers,
            WatchLoadClient.Format format,
            int threads,
            int sampleEvery)
            throws IOException, InterruptedException {
        WatchLoadClient c =
                new WatchLoadClient(new InetSocketAddress("127.0.0.1", port), targets, format, threads, sampleEvery);
        c.headers(headers);
        c.open(watchers);
        if (!c.awaitAttached(TimeUnit.MINUTES.toMillis(5)) || c.failed() > 0) {
            c.close();
            throw new IllegalStateException(c.attached() + " of " + watchers + " watch streams attached, " + c.failed()
                    + " failed: " + c.lastError());
        }
        return new WatchTarget() {
            @Override
            public long deliveries() {
                return c.frames();
            }

            @Override
            public Recorder latency() {
                return c.latency();
            }

            @Override
            public void close() {
                c.close();
            }
        };
    }

    /** jetcd watchers on etcd or a grpc-proxy. */
    static WatchTarget jetcd(String endpoint, String prefix, int watchers, int clients, int sampleEvery) {
        EtcdWatchers w = new EtcdWatchers(endpoint, prefix, watchers, clients, sampleEvery);
        return new WatchTarget() {
            @Override
            public long deliveries() {
                return w.events();
            }

            @Override
            public Recorder latency() {
                return w.latency();
            }

            @Override
            public void close() {
                w.close();
            }
        };
    }

    /**
     * Puts a probe under {@code prefix} until every watcher got one (the watches are established),
     * up to {@code timeoutMillis}.
     */
    static void awaitLive(WatchTarget t, Client client, String prefix, int watchers, long timeoutMillis)
            throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            long before = t.deliveries();
            client.getKVClient()
                    .put(ByteSequence.from(prefix + "probe", StandardCharsets.UTF_8), ByteSequence.from(new byte[16]))
                    .get(10, TimeUnit.SECONDS);
            long wait = System.currentTimeMillis() + 3000;
            while (System.currentTimeMillis() < wait) {
                if (t.deliveries() - before >= watchers) {
                    Thread.sleep(300);
                    return;
                }
                Thread.sleep(20);
            }
        }
        throw new IllegalStateException(
                "watchers not all live within " + timeoutMillis + " ms (deliveries " + t.deliveries() + ")");
    }
}
