package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(EtcdExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdServerTest {

    @Test
    @Order(1)
    void sharedServerIsHealthyAndStoresKeys(EtcdServer etcd, TestInfo info) throws Exception {
        assertThat(etcd.isAlive()).isTrue();
        assertThat(etcd.clientUrl()).isEqualTo("http://127.0.0.1:" + etcd.clientPort());
        String key = "/" + TopicPrefixes.unique(info) + "/a";
        long revision = EtcdHttp.put(etcd, key, "hello".getBytes(StandardCharsets.UTF_8));
        assertThat(revision).isPositive();
        assertThat(EtcdHttp.get(etcd, key))
                .hasValueSatisfying(
                        v -> assertThat(new String(v, StandardCharsets.UTF_8)).isEqualTo("hello"));
    }

    @Test
    @Order(2)
    void acceptsRequestsOverEtcdsDefaultLimit(EtcdServer etcd, TestInfo info) throws Exception {
        // etcd's default --max-request-bytes is 1.5 MiB; the testkit raises it to 10 MiB
        byte[] value = new byte[5 << 20];
        ThreadLocalRandom.current().nextBytes(value);
        String key = "/" + TopicPrefixes.unique(info) + "/big";
        EtcdHttp.put(etcd, key, value);
        assertThat(EtcdHttp.get(etcd, key))
                .hasValueSatisfying(v -> assertThat(Arrays.equals(v, value)).isTrue());
    }

    @Test
    @Order(3)
    void sendsWatchProgressNotificationsEverySecond(EtcdServer etcd, TestInfo info) throws Exception {
        // POST /v3/watch streams one JSON object per line: "created", then progress notifications
        String key = "/" + TopicPrefixes.unique(info) + "/quiet";
        HttpURLConnection conn = (HttpURLConnection)
                URI.create(etcd.clientUrl() + "/v3/watch").toURL().openConnection();
        conn.setDoOutput(true);
        conn.setReadTimeout(8000);
        try {
            try (OutputStream out = conn.getOutputStream()) {
                out.write(("{\"create_request\":{\"key\":\"" + EtcdHttp.b64(key.getBytes(StandardCharsets.UTF_8))
                                + "\",\"progress_notify\":true}}")
                        .getBytes(StandardCharsets.UTF_8));
            }
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(conn.getInputStream(), StandardCharsets.UTF_8));
            assertThat(in.readLine()).contains("\"created\":true");
            long startNanos = System.nanoTime();
            String progress = in.readLine();
            long waitedMillis = (System.nanoTime() - startNanos) / 1_000_000;
            assertThat(progress)
                    .contains("\"revision\"")
                    .doesNotContain("\"events\"")
                    .doesNotContain("\"created\"");
            assertThat(waitedMillis).isLessThan(5000);
        } finally {
            conn.disconnect();
        }
    }

    @Test
    @Order(4)
    void aKilledSharedServerIsRevivedBeforeTheNextTest(EtcdServer etcd) throws Exception {
        EtcdHttp.put(etcd, "/testkit/revive", "before".getBytes(StandardCharsets.UTF_8));
        etcd.kill();
        assertThat(etcd.isAlive()).isFalse();
        // deliberately left dead: the next test must find it running again
    }

    @Test
    @Order(5)
    void sharedServerIsRunningAgainWithItsData(EtcdServer etcd) throws Exception {
        assertThat(etcd.isAlive()).isTrue();
        assertThat(EtcdHttp.get(etcd, "/testkit/revive")).isPresent();
    }

    @Test
    @Order(6)
    void privateServerRestartsOnSameDataAndPorts() throws Exception {
        try (EtcdServer etcd = EtcdServer.builder().build().start()) {
            int port = etcd.clientPort();
            long firstPid = etcd.pid();
            EtcdHttp.put(etcd, "/k", "v1".getBytes(StandardCharsets.UTF_8));

            etcd.restart(); // SIGTERM, start
            assertThat(etcd.pid()).isNotEqualTo(firstPid);
            assertThat(etcd.clientPort()).isEqualTo(port);
            assertThat(EtcdHttp.get(etcd, "/k")).isPresent();

            EtcdHttp.put(etcd, "/k2", "v2".getBytes(StandardCharsets.UTF_8));
            etcd.kill(); // SIGKILL: a crash
            assertThat(etcd.isAlive()).isFalse();
            etcd.start();
            assertThat(EtcdHttp.get(etcd, "/k")).isPresent();
            assertThat(EtcdHttp.get(etcd, "/k2")).isPresent();
            assertThat(etcd.logTail(5)).isNotEmpty();
            assertThat(Files.readString(etcd.logFile())).contains("testkit").contains("starting etcd");
        }
    }

    @Test
    @Order(7)
    void closeDeletesDataAndKeepsTheLog() {
        EtcdServer etcd = EtcdServer.builder().build().start();
        etcd.close();
        assertThat(etcd.isAlive()).isFalse();
        assertThat(etcd.dataDir()).doesNotExist();
        assertThat(etcd.logFile()).exists();
        etcd.close(); // idempotent
    }

    @Test
    @Order(8)
    void missingBinaryNamesTheDebianPackage() {
        EtcdServer etcd =
                EtcdServer.builder().executable("etcd-not-installed-here").build();
        assertThatThrownBy(etcd::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("etcd-not-installed-here")
                .hasMessageContaining("etcd-server");
        etcd.close();
    }

    @Test
    @Order(9)
    void failedStartReportsTheLogTail() {
        EtcdServer etcd = EtcdServer.builder().extraArg("--no-such-flag").build();
        assertThatThrownBy(etcd::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("exited with code")
                .hasMessageContaining(etcd.logFile().toString())
                .hasMessageContaining("no-such-flag");
        etcd.close();
        assertThat(etcd.logFile()).exists();
    }
}
