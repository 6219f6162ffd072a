package io.watchfanout.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real {@code curl} binary, as an operator would run it against a listener ({@code --cacert},
 * {@code --cert}/{@code --key} for TLS): {@code -sS}, at most 60 s per request. Stateless and
 * thread-safe.
 *
 * @param exit curl's exit status: 0, or why it failed (60: an untrusted certificate, 56 or 35: a
 *     refused handshake)
 * @param out what curl printed on its standard output
 */
public record Curl(int exit, String out) {
    /**
     * Runs curl to its end.
     *
     * @param args curl's arguments after {@code -sS --max-time 60}
     * @throws IllegalStateException if curl does not end within 90 s
     */
    public static Curl run(String... args) {
        List<String> command = new ArrayList<>(List.of("curl", "-sS", "--max-time", "60"));
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("curl did not end: " + command);
            }
            return new Curl(p.exitValue(), out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * {@code curl --cacert caCert [--cert --key of client] url}: a request over TLS that trusts
     * {@code caCert} and presents {@code client}'s certificate, or none when it is null.
     */
    public static Curl tls(Path caCert, Pki.Issued client, String url) {
        List<String> args = new ArrayList<>(List.of("--cacert", caCert.toString()));
        if (client != null) {
            args.addAll(List.of(
                    "--cert", client.cert().toString(), "--key", client.key().toString()));
        }
        args.add(url);
        return run(args.toArray(new String[0]));
    }

    /** A successful run's output. */
    public static Curl ok(String out) {
        return new Curl(0, out);
    }
}
