package io.watchfanout.fanout.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.fanout.etcd.EtcdApi;
import io.watchfanout.fanout.etcd.EtcdApiSettings;
import io.watchfanout.fanout.etcd.EtcdApis;
import io.watchfanout.fanout.etcd.EtcdCredentials;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.TcpKeepalive;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.TlsClientContext;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Watches of etcd's JSON gateway ({@code POST /v3/watch}) on a quiet range, whose clients hang
 * up: each watch leaves the node (its watcher and its etcd API stream) as soon as its client
 * closes the connection, although nothing is ever written to it, on plain HTTP and over TLS;
 * and open gateway streams hold no thread each while they wait.
 */
class GatewayHangUpTest {
    private static final int STREAMS = 20;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final CollectorRegistry registry = new CollectorRegistry();
    private final List<Client> clients = new ArrayList<>();
    private WatchCore core;
    private EtcdApi grpc;
    private HttpApi http;
    private SSLContext clientTls;

    private void start(boolean tls) {
        core = new WatchCore(CoreSettings.of(1000, Duration.ofMinutes(10), 64, "hangup-test"), new FrameEncoder());
        core.start();
        core.feed().startAt(100);
        core.feed().markReady();
        AccessControl open = AccessControl.open("hangup-test", WatchLimits.NONE);
        grpc = EtcdApis.create(
                core,
                new EtcdApiSettings("127.0.0.1", 0, "hangup-test", Duration.ofMinutes(10), Duration.ofSeconds(1)),
                null,
                EtcdCredentials.none(),
                registry,
                open);
        grpc.start();
        // Keepalive and the write timeout far beyond the test: only the hang-up can end a stream.
        HttpSettings settings = new HttpSettings(
                Duration.ofMillis(300),
                1,
                "hangup-test",
                Duration.ofMinutes(10),
                Duration.ofMinutes(10),
                new TcpKeepalive(Duration.ofMinutes(10), Duration.ofMinutes(1), 3));
        http = new HttpApi(core, settings, new CollectorRegistry(), "127.0.0.1", 0);
        GatewayHandler.mountOn(
                http, grpc.gateway(), core.readiness(), settings.writeTimeout(), settings.retryAfterSeconds());
        if (tls) {
            Pki pki = Pki.create(dir, "ca");
            Pki.Issued server = pki.server("node", "node-a");
            http.serveTls(ServerTls.load(new TlsFiles(server.cert(), server.key(), null)));
            clientTls = TlsClientContext.of(pki.caCert(), null);
        }
        http.start();
    }

    @AfterEach
    void stop() throws Exception {
        for (Client c : clients) {
            c.raw().close();
        }
        if (http != null) {
            http.stop();
            grpc.stop(1000);
            core.close();
        }
    }

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    void aGatewayWatchEndsWhenItsClientHangsUpAndHoldsNoThreadWhileItWaits(boolean tls) throws Exception {
        start(tls);
        // One watch opened and closed first, so that whatever starts once (pools, timers) has started.
        hangUp(watch());
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(core.status().watcherCount()).isZero();
            assertThat(watchStreams()).isZero();
        });
        int threadsBefore = Thread.activeCount();

        for (int i = 0; i < STREAMS; i++) {
            clients.add(watch());
        }
        await().atMost(WAIT).until(() -> core.status().watcherCount() == STREAMS && watchStreams() == STREAMS);
        assertThat(Thread.activeCount() - threadsBefore)
                .as("threads started for %d open gateway watches", STREAMS)
                .isLessThan(STREAMS / 2);

        for (Client c : clients) {
            hangUp(c);
        }
        clients.clear();
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(core.status().watcherCount()).isZero();
            assertThat(watchStreams()).isZero();
        });
        // The node serves on: a new watch is created as before.
        Client again = watch();
        await().atMost(WAIT).until(() -> core.status().watcherCount() == 1);
        hangUp(again);
        await().atMost(WAIT).until(() -> core.status().watcherCount() == 0);
    }

    /**
     * A client connection: the TCP socket and, over TLS, the TLS socket on it (held, as a TLS
     * socket nobody holds may be finalized, and closed, under the test).
     */
    private record Client(Socket raw, Socket tls) {}

    /** A gateway watch of a quiet range, returned once its {@code created} response arrived. */
    private Client watch() throws IOException {
        // Over TLS, the TCP socket is kept: hanging up closes it under the TLS session.
        Socket raw = new Socket("127.0.0.1", http.port());
        Socket s = clientTls == null
                ? raw
                : clientTls.getSocketFactory().createSocket(raw, "127.0.0.1", http.port(), true);
        byte[] body = ("{\"create_request\":{\"key\":\"" + b64("/quiet/") + "\",\"range_end\":\"" + b64("/quiet0")
                        + "\"}}")
                .getBytes(StandardCharsets.UTF_8);
        OutputStream out = s.getOutputStream();
        out.write(("POST /v3/watch HTTP/1.1\r\nHost: node\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
        assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 OK");
        String line;
        while ((line = in.readLine()) != null && !line.contains("\"created\":true")) {
            // headers and chunk sizes
        }
        assertThat(line).as("the watch's created response").isNotNull();
        return new Client(raw, s);
    }

    /** The client goes away: a FIN (over TLS without a close_notify, as a killed curl leaves it). */
    private static void hangUp(Client c) throws IOException {
        c.raw().close();
    }

    private double watchStreams() {
        Double v = registry.getSampleValue("watchfanout_etcd_api_watch_streams");
        return v == null ? 0 : v;
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
