package io.watchfanout.localstack;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes to etcd with the {@code etcdctl} binary (Debian package {@code etcd-client}): a
 * client this project did not write.
 */
final class Etcdctl {
    private static final Pattern REVISION = Pattern.compile("\"revision\":(\\d+)");

    private final String endpoint;

    Etcdctl(String endpoint) {
        this.endpoint = endpoint;
    }

    /** {@code etcdctl put key value}; returns the revision of the write. */
    long put(String key, String value) throws IOException, InterruptedException {
        return revision(run(null, "put", key, value, "-w", "json"));
    }

    /** {@code etcdctl put key value --lease=ID}; returns the revision of the write. */
    long put(String key, String value, long lease) throws IOException, InterruptedException {
        return revision(run(null, "put", key, value, "--lease=" + Long.toHexString(lease), "-w", "json"));
    }

    /** {@code etcdctl del key [--prefix]}; returns the revision of the delete. */
    long delete(String key, boolean prefix) throws IOException, InterruptedException {
        return prefix
                ? revision(run(null, "del", key, "--prefix", "-w", "json"))
                : revision(run(null, "del", key, "-w", "json"));
    }

    /**
     * {@code etcdctl txn} fed on stdin: compares, then the requests of the success branch, then
     * those of the failure branch, each block ended by an empty line.
     *
     * @return the revision after the transaction
     */
    long txn(List<String> compares, List<String> success, List<String> failure)
            throws IOException, InterruptedException {
        String input = block(compares) + block(success) + block(failure);
        return revision(run(input, "txn", "-w", "json"));
    }

    private static String block(List<String> lines) {
        StringBuilder s = new StringBuilder();
        lines.forEach(l -> s.append(l).append('\n'));
        return s.append('\n').toString();
    }

    /** {@code etcdctl lease grant TTL}; returns the lease id. */
    long grantLease(long ttlSeconds) throws IOException, InterruptedException {
        String out = run(null, "lease", "grant", Long.toString(ttlSeconds), "-w", "json");
        Matcher m = Pattern.compile("\"ID\":(\\d+)").matcher(out);
        if (!m.find()) {
            throw new AssertionError("no lease ID in: " + out);
        }
        return Long.parseLong(m.group(1));
    }

    private static long revision(String json) {
        Matcher m = REVISION.matcher(json);
        if (!m.find()) {
            throw new AssertionError("no revision in etcdctl's answer: " + json);
        }
        return Long.parseLong(m.group(1));
    }

    private String run(String stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("etcdctl", "--endpoints=" + endpoint));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("ETCDCTL_API", "3");
        Process p = builder.start();
        if (stdin != null) {
            p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }
}
