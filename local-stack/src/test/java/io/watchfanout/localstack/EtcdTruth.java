package io.watchfanout.localstack;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.watchfanout.schema.v1.WatchEvent.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * What etcd itself says, through a direct jetcd watch and range reads: the reference every
 * watcher of the fan-out tier is compared with. Events are rendered as one line each, in the
 * watch frame's terms (README.md, "The watch protocol", frames), so that a mismatch shows
 * as a readable diff.
 */
final class EtcdTruth implements AutoCloseable {
    /** One etcd event with its place in its revision. */
    record Event(String key, String line) {}

    private final Client client;

    EtcdTruth(String endpoint) {
        this.client = Client.builder().endpoints(endpoint).build();
    }

    Client client() {
        return client;
    }

    /** etcd's current revision. */
    long revision() throws Exception {
        return client.getKVClient()
                .get(bytes("/"))
                .get(10, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }

    /** How many keys start with {@code prefix} now. */
    long count(String prefix) throws Exception {
        return client.getKVClient()
                .get(
                        bytes(prefix),
                        GetOption.builder().isPrefix(true).withCountOnly(true).build())
                .get(10, TimeUnit.SECONDS)
                .getCount();
    }

    /** The key-values under {@code prefix} at {@code revision}, as {@code key=value@mod} lines. */
    List<String> state(String prefix, long revision) throws Exception {
        List<String> out = new ArrayList<>();
        for (KeyValue kv : client.getKVClient()
                .get(
                        bytes(prefix),
                        GetOption.builder()
                                .isPrefix(true)
                                .withRevision(revision)
                                .build())
                .get(10, TimeUnit.SECONDS)
                .getKvs()) {
            out.add(kvLine(
                    kv.getKey().toString(StandardCharsets.UTF_8),
                    kv.getValue().getBytes(),
                    kv.getCreateRevision(),
                    kv.getModRevision(),
                    kv.getVersion(),
                    kv.getLease()));
        }
        return out;
    }

    /**
     * Every event under {@code prefix} with revision in {@code (fromRevision, toRevision]}, from a
     * direct etcd watch, rendered as frame lines with index and count within the revision.
     */
    List<Event> events(String prefix, long fromRevision, long toRevision) throws Exception {
        Map<Long, List<WatchEvent>> byRevision = new LinkedHashMap<>();
        CountDownLatch done = new CountDownLatch(1);
        WatchOption option = WatchOption.builder()
                .isPrefix(true)
                .withPrevKV(true)
                .withRevision(fromRevision + 1)
                .build();
        Watch.Watcher watcher = client.getWatchClient().watch(bytes(prefix), option, (WatchResponse response) -> {
            synchronized (byRevision) {
                for (WatchEvent e : response.getEvents()) {
                    long rev = e.getKeyValue().getModRevision();
                    if (rev <= toRevision) {
                        byRevision.computeIfAbsent(rev, r -> new ArrayList<>()).add(e);
                    }
                    if (rev >= toRevision) {
                        done.countDown();
                    }
                }
            }
        });
        try {
            if (!done.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("etcd's own watch did not reach revision " + toRevision);
            }
        } finally {
            watcher.close();
        }
        List<Event> out = new ArrayList<>();
        synchronized (byRevision) {
            byRevision.forEach((rev, events) -> {
                for (int i = 0; i < events.size(); i++) {
                    WatchEvent e = events.get(i);
                    KeyValue kv = e.getKeyValue();
                    String key = kv.getKey().toString(StandardCharsets.UTF_8);
                    Type type;
                    KeyValue object;
                    if (e.getEventType() == WatchEvent.EventType.DELETE) {
                        type = Type.DELETED;
                        object = e.getPrevKV();
                    } else {
                        type = kv.getVersion() == 1 ? Type.ADDED : Type.MODIFIED;
                        object = kv;
                    }
                    out.add(new Event(
                            key,
                            frameLine(
                                    type,
                                    rev,
                                    i,
                                    events.size(),
                                    kvLine(
                                            key,
                                            object.getValue().getBytes(),
                                            object.getCreateRevision(),
                                            object.getModRevision(),
                                            object.getVersion(),
                                            object.getLease()))));
                }
            });
        }
        return out;
    }

    /** The events of {@code all} whose key matches, in order. */
    static List<String> lines(List<Event> all, Predicate<String> keyMatches) {
        List<String> out = new ArrayList<>();
        for (Event e : all) {
            if (keyMatches.test(e.key())) {
                out.add(e.line());
            }
        }
        return out;
    }

    /** A watch frame rendered like {@link #events}. */
    static String frameLine(io.watchfanout.schema.v1.WatchEvent f) {
        io.watchfanout.schema.v1.KeyValue kv = f.getObject();
        return frameLine(
                f.getType(),
                f.getResourceVersion(),
                f.getIndex(),
                f.getCount(),
                kvLine(
                        kv.getKey().toStringUtf8(),
                        kv.getValue().toByteArray(),
                        kv.getCreateRevision(),
                        kv.getModRevision(),
                        kv.getVersion(),
                        kv.getLease()));
    }

    /** A key-value from {@code /v1/kv} rendered like {@link #state}. */
    static String kvLine(io.watchfanout.schema.v1.KeyValue kv) {
        return kvLine(
                kv.getKey().toStringUtf8(),
                kv.getValue().toByteArray(),
                kv.getCreateRevision(),
                kv.getModRevision(),
                kv.getVersion(),
                kv.getLease());
    }

    private static String frameLine(Type type, long resourceVersion, int index, int count, String kv) {
        return type + " rv=" + resourceVersion + " [" + index + "/" + count + "] " + kv;
    }

    private static String kvLine(String key, byte[] value, long create, long mod, long version, long lease) {
        String v = new String(value, StandardCharsets.UTF_8);
        String shown = v.length() <= 40
                ? v
                : v.substring(0, 20) + "...(" + value.length + " bytes, sha "
                        + Base64.getEncoder().encodeToString(sha(value)) + ")";
        return key + "=" + shown + " create=" + create + " mod=" + mod + " version=" + version + " lease=" + lease;
    }

    private static byte[] sha(byte[] value) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(value);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        client.close();
    }
}
