package io.watchfanout.fanout.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.tls.PeerCertificates;
import io.watchfanout.common.tls.ServerTls;
import io.watchfanout.common.tls.TlsFiles;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.testkit.Pki;
import io.watchfanout.testkit.TlsClientContext;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The etcd API's gRPC port over TLS, with a core fed by the test (no Kafka, no etcd behind):
 * etcdctl reads and watches over mutual TLS, and is refused without a client certificate or with
 * one of another CA; a certificate rotated on disk is what new connections get while an open
 * Watch stream (grpc-java on netty) goes on receiving events.
 */
class EtcdApiTlsTest {
    @TempDir
    Path dir;

    private final EtcdLog etcd = new EtcdLog(100);
    private Pki pki;
    private Pki.Issued server;
    private WatchCore core;
    private RecordFeed applier;
    private EtcdApi api;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeEach
    void certificates() {
        pki = Pki.create(dir, "ca");
        server = pki.server("node", "node-a");
    }

    private void start(boolean mutual) {
        core = new WatchCore(CoreSettings.of(1000, Duration.ofMinutes(10), 256, "etcd-tls-test"), new FrameEncoder());
        core.start();
        core.feed().startAt(100);
        core.feed().markReady();
        applier = new RecordFeed(core.feed(), 100);
        api = EtcdApis.create(
                core,
                "127.0.0.1",
                0,
                "etcd-tls-test",
                null,
                EtcdCredentials.none(),
                Duration.ofMinutes(10),
                Duration.ofSeconds(1),
                new CollectorRegistry(),
                io.watchfanout.fanout.security.AccessControl.open(
                        "etcd-tls-test", io.watchfanout.fanout.security.WatchLimits.NONE));
        api.serveTls(ServerTls.load(new TlsFiles(server.cert(), server.key(), mutual ? pki.caCert() : null)));
        api.start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (api != null) {
            api.stop(1000);
            core.close();
        }
    }

    /** etcdctl's arguments for the node, with the client certificate {@code client} (or none). */
    private List<String> etcdctl(Pki.Issued client, String... args) {
        return etcdctlDialing("30s", client, args);
    }

    /** As above, giving up on the connection and the command after {@code dialTimeout}. */
    private List<String> etcdctlDialing(String dialTimeout, Pki.Issued client, String... args) {
        List<String> command = new ArrayList<>(List.of(
                "etcdctl",
                "--endpoints=https://127.0.0.1:" + api.port(),
                "--cacert=" + pki.caCert(),
                "--dial-timeout=" + dialTimeout,
                "--command-timeout=" + dialTimeout));
        if (client != null) {
            command.add("--cert=" + client.cert());
            command.add("--key=" + client.key());
        }
        command.addAll(List.of(args));
        return command;
    }

    private static Process run(List<String> command) throws Exception {
        ProcessBuilder b = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        b.environment().put("ETCDCTL_API", "3");
        return b.start();
    }

    /** Runs etcdctl to its end: its output, or null if it failed. */
    private static String finish(Process p) throws Exception {
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return p.exitValue() == 0 ? out : null;
    }

    @Test
    void etcdctlReadsAndWatchesOverMutualTlsAndIsRefusedWithoutACertificateOfTheCa() throws Exception {
        start(true);
        etcd.put("/a/1", "x").forEach(applier::accept);
        Pki.Issued alice = pki.client("alice", "alice");
        Pki.Issued mallory = Pki.create(dir.resolve("other"), "other-ca").client("mallory", "mallory");

        assertThat(finish(run(etcdctl(alice, "get", "/a/", "--prefix", "--consistency=s"))))
                .isEqualTo("/a/1\nx\n");
        // A refused handshake: etcdctl gives up at its timeouts; nothing is served.
        assertThat(finish(run(etcdctlDialing("3s", null, "get", "/a/", "--prefix", "--consistency=s"))))
                .as("no client certificate")
                .isNull();
        assertThat(finish(run(etcdctlDialing("3s", mallory, "get", "/a/", "--prefix", "--consistency=s"))))
                .as("a client certificate of another CA")
                .isNull();

        Process watch = run(etcdctl(alice, "watch", "/a/", "--prefix", "--rev=101"));
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(watch.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(List.of(lines.readLine(), lines.readLine(), lines.readLine()))
                    .containsExactly("PUT", "/a/1", "x");
            etcd.put("/a/2", "y").forEach(applier::accept);
            assertThat(List.of(lines.readLine(), lines.readLine(), lines.readLine()))
                    .containsExactly("PUT", "/a/2", "y");
        } finally {
            watch.destroyForcibly().waitFor();
        }
    }

    @Test
    void aRotatedCertificateIsWhatNewConnectionsGetWhileAnOpenWatchGoesOn() throws Exception {
        start(false);
        javax.net.ssl.SSLContext trustCa = TlsClientContext.of(pki.caCert(), null);
        BigInteger before =
                TlsClientContext.served(trustCa, "127.0.0.1", api.port()).getSerialNumber();

        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", api.port())
                .sslContext(GrpcSslContexts.forClient()
                        .trustManager(pki.caCert().toFile())
                        .build())
                .build();
        channels.add(channel);
        List<WatchResponse> received = new CopyOnWriteArrayList<>();
        StreamObserver<WatchRequest> requests = WatchGrpc.newStub(channel).watch(new StreamObserver<>() {
            @Override
            public void onNext(WatchResponse r) {
                received.add(r);
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        });
        requests.onNext(WatchRequest.newBuilder()
                .setCreateRequest(WatchCreateRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8("/r/"))
                        .setRangeEnd(ByteString.copyFromUtf8("/r0"))
                        .setStartRevision(101))
                .build());
        etcd.put("/r/1", "before").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(60)).until(() -> values(received).contains("before"));

        pki.server("node", "node-b"); // the same files, replaced
        await().atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> assertThat(TlsClientContext.served(trustCa, "127.0.0.1", api.port()))
                        .satisfies(c -> {
                            assertThat(c.getSerialNumber()).isNotEqualTo(before);
                            assertThat(PeerCertificates.commonName(c)).isEqualTo("node-b");
                        }));

        etcd.put("/r/1", "after").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(60)).until(() -> values(received).contains("after"));
        requests.onCompleted();
    }

    private static List<String> values(List<WatchResponse> responses) {
        return responses.stream()
                .flatMap(r -> r.getEventsList().stream())
                .map(e -> e.getKv().getValue().toStringUtf8())
                .toList();
    }
}
