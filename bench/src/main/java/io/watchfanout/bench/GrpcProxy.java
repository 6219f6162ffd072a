package io.watchfanout.bench;

import io.watchfanout.testkit.FreePorts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code etcd grpc-proxy start} (the same etcd binary) in front of an etcd, as a child process;
 * it coalesces watchers of the same range into one etcd watch.
 */
final class GrpcProxy implements AutoCloseable {
    private final Process process;
    private final int port;

    GrpcProxy(String etcdEndpoint, Path log) throws IOException, InterruptedException {
        port = FreePorts.pick();
        Files.createDirectories(log.getParent());
        String endpoint = etcdEndpoint.replaceFirst("^https?://", "");
        process = new ProcessBuilder(List.of(
                        "etcd", "grpc-proxy", "start", "--endpoints=" + endpoint, "--listen-addr=127.0.0.1:" + port))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("etcd grpc-proxy exited with " + process.exitValue() + "; log " + log);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException e) {
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("etcd grpc-proxy not listening on " + port + "; log " + log);
    }

    String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
