package io.watchfanout.testkit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Test load for etcd. Writes a reproducible mix of etcd operations under a key prefix: creates, updates,
 * deletes and multi-key transactions (puts and deletes in one revision). Not thread-safe.
 */
public final class EtcdWorkload {
    private final Client client;
    private final String prefix;
    private final Random random;
    private final int keySpace;

    /**
     * @param client jetcd client
     * @param prefix key prefix of every key written
     * @param seed random seed
     * @param keySpace number of distinct keys
     */
    public EtcdWorkload(Client client, String prefix, long seed, int keySpace) {
        this.client = client;
        this.prefix = prefix;
        this.random = new Random(seed);
        this.keySpace = keySpace;
    }

    /** The UTF-8 bytes of {@code s}. */
    public static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private ByteSequence key(int i) {
        return bytes(prefix + "k" + i);
    }

    private ByteSequence value() {
        return bytes("v" + random.nextInt(1_000_000) + "-" + "x".repeat(random.nextInt(64)));
    }

    /**
     * Runs {@code operations} operations: ~60 % puts, ~20 % deletes, ~20 % transactions of 2–5
     * keys.
     *
     * @return the etcd revision after the last operation
     */
    public long run(int operations) throws Exception {
        KV kv = client.getKVClient();
        long revision = 0;
        for (int i = 0; i < operations; i++) {
            int dice = random.nextInt(10);
            if (dice < 6) {
                revision = kv.put(key(random.nextInt(keySpace)), value())
                        .get(10, TimeUnit.SECONDS)
                        .getHeader()
                        .getRevision();
            } else if (dice < 8) {
                revision = kv.delete(key(random.nextInt(keySpace)))
                        .get(10, TimeUnit.SECONDS)
                        .getHeader()
                        .getRevision();
            } else {
                revision = transaction(2 + random.nextInt(4));
            }
        }
        return revision;
    }

    /** One transaction writing and deleting several keys in one revision. */
    public long transaction(int keys) throws Exception {
        List<Op> ops = new ArrayList<>();
        List<Integer> used = new ArrayList<>();
        while (used.size() < keys) {
            int k = random.nextInt(keySpace);
            if (!used.contains(k)) {
                used.add(k);
            }
        }
        for (int k : used) {
            if (random.nextInt(4) == 0) {
                ops.add(Op.delete(key(k), DeleteOption.DEFAULT));
            } else {
                ops.add(Op.put(key(k), value(), PutOption.DEFAULT));
            }
        }
        return client.getKVClient()
                .txn()
                .Then(ops.toArray(Op[]::new))
                .commit()
                .get(10, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }

    /**
     * Attaches {@code keys} keys to a lease of {@code ttlSeconds} and returns the lease id; when
     * it expires, etcd deletes all of them in one revision.
     */
    public long leaseWithKeys(int keys, long ttlSeconds) throws Exception {
        long lease = client.getLeaseClient()
                .grant(ttlSeconds)
                .get(10, TimeUnit.SECONDS)
                .getID();
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            ops.add(Op.put(
                    bytes(prefix + "lease-" + lease + "-" + i),
                    value(),
                    PutOption.builder().withLeaseId(lease).build()));
        }
        client.getKVClient().txn().Then(ops.toArray(Op[]::new)).commit().get(10, TimeUnit.SECONDS);
        return lease;
    }

    /** The current etcd revision. */
    public static long currentRevision(Client client) throws Exception {
        return client.getKVClient()
                .get(bytes("\0"))
                .get(10, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }
}
