package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link HaproxyServer}'s configuration, as Debian's haproxy reads it ({@code haproxy -c}). */
class HaproxyServerTest {
    @TempDir
    Path dir;

    @Test
    void haproxyAcceptsTheConfigurationPlainAndWithTls() throws Exception {
        assertThat(HaproxyServer.executable())
                .as("haproxy on PATH (Debian package haproxy)")
                .isPresent();
        List<HaproxyServer.Node> nodes =
                List.of(new HaproxyServer.Node(8081, 23791), new HaproxyServer.Node(8082, 23792));
        for (boolean tls : List.of(false, true)) {
            String config = HaproxyServer.config(8080, 23790, nodes, tls);
            assertThat(config)
                    .contains("bind 127.0.0.1:8080", "bind 127.0.0.1:23790")
                    .contains("server node-8082 127.0.0.1:23792 check")
                    .contains("port 8082")
                    .contains("uri /readyz")
                    .contains("timeout server 1h")
                    .contains(tls ? "check-ssl verify none" : "mode http");
            Path file = dir.resolve("haproxy-" + tls + ".cfg");
            Files.writeString(file, config, StandardCharsets.UTF_8);
            Process check = new ProcessBuilder(
                            HaproxyServer.executable().orElseThrow().toString(), "-c", "-f", file.toString())
                    .redirectErrorStream(true)
                    .start();
            String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(check.waitFor()).as("haproxy -c: " + out).isZero();
        }
    }
}
