package io.watchfanout.bench.chaos;

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
import java.util.concurrent.atomic.AtomicLong;

/**
 * The mixed etcd workload of the chaos run, at a fixed rate of operations: puts (values of
 * 50..3000 bytes) and deletes over a pool of keys, transactions of 2..4 puts and deletes, and
 * keys under leases of 2..4 s that etcd deletes together when the lease expires. An operation
 * that fails or takes more than 3 s (etcd down or stopped) is counted and the next one is sent;
 * the verification uses etcd's own history, not what was sent.
 *
 * <p>Thread-safety: {@link #run()} on its own thread; counters and {@link #mark()} from any.
 */
final class ChaosWorkload implements Runnable {
    private static final int KEYS = 200;
    private final Client client;
    private final KV kv;
    private final String prefix;
    private final double rate;
    private final Random random;
    private final byte[] letters = new byte[4096];
    private final AtomicLong ok = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong puts = new AtomicLong();
    private final AtomicLong deletes = new AtomicLong();
    private final AtomicLong txns = new AtomicLong();
    private final AtomicLong leased = new AtomicLong();
    private volatile boolean running = true;
    private long seq;

    ChaosWorkload(Client client, String prefix, double rate, long seed) {
        this.client = client;
        this.kv = client.getKVClient();
        this.prefix = prefix;
        this.rate = rate;
        this.random = new Random(seed);
        for (int i = 0; i < letters.length; i++) {
            letters[i] = (byte) ('a' + random.nextInt(26));
        }
    }

    @Override
    public void run() {
        long begin = System.nanoTime();
        long i = 0;
        while (running) {
            long due = begin + (long) (i * 1e9 / rate);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                sleepNanos(wait);
                continue;
            }
            if (-wait > 2_000_000_000L) {
                // fell behind (etcd was down): do not burst to catch up
                begin = System.nanoTime() - (long) (i * 1e9 / rate);
            }
            i++;
            try {
                step();
                ok.incrementAndGet();
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                    return;
                }
                failed.incrementAndGet();
            }
        }
    }

    private void step() throws Exception {
        int dice = random.nextInt(100);
        if (dice < 45) {
            kv.put(key(), value()).get(3, TimeUnit.SECONDS);
            puts.incrementAndGet();
        } else if (dice < 60) {
            kv.delete(key()).get(3, TimeUnit.SECONDS);
            deletes.incrementAndGet();
        } else if (dice < 85) {
            int n = 2 + random.nextInt(3);
            List<Op> ops = new ArrayList<>();
            List<ByteSequence> used = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                ByteSequence k = key();
                if (used.contains(k)) {
                    continue; // etcd refuses a key twice in one transaction
                }
                used.add(k);
                ops.add(
                        random.nextInt(4) == 0
                                ? Op.delete(k, DeleteOption.DEFAULT)
                                : Op.put(k, value(), PutOption.DEFAULT));
            }
            kv.txn().Then(ops.toArray(new Op[0])).commit().get(3, TimeUnit.SECONDS);
            txns.incrementAndGet();
        } else {
            long lease = client.getLeaseClient()
                    .grant(2 + random.nextInt(3))
                    .get(3, TimeUnit.SECONDS)
                    .getID();
            int n = 1 + random.nextInt(3);
            long s = seq++;
            for (int j = 0; j < n; j++) {
                kv.put(
                                bytes(prefix + "lease/" + s + "-" + j),
                                value(),
                                PutOption.builder().withLeaseId(lease).build())
                        .get(3, TimeUnit.SECONDS);
            }
            leased.incrementAndGet();
        }
    }

    /**
     * Puts a marker key and returns its revision: an event written now, which every watcher must
     * receive. Retries for up to {@code timeoutMillis}; -1 if etcd did not take it.
     */
    long mark(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (System.nanoTime() < deadline) {
            try {
                return kv.put(bytes(prefix + "marker"), bytes("m-" + System.nanoTime()))
                        .get(3, TimeUnit.SECONDS)
                        .getHeader()
                        .getRevision();
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                Thread.sleep(100);
            }
        }
        return -1;
    }

    private ByteSequence key() {
        return bytes(String.format("%sk-%03d", prefix, random.nextInt(KEYS)));
    }

    private ByteSequence value() {
        int len = 50 + random.nextInt(2950);
        byte[] v = new byte[len];
        byte[] head = ("v" + seq++ + ":").getBytes(StandardCharsets.US_ASCII);
        int off = random.nextInt(letters.length - len + 1);
        System.arraycopy(letters, off, v, 0, len);
        System.arraycopy(head, 0, v, 0, Math.min(head.length, len));
        return ByteSequence.from(v);
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static void sleepNanos(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(Math.min(nanos, 100_000_000L));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void stop() {
        running = false;
    }

    long ok() {
        return ok.get();
    }

    long failed() {
        return failed.get();
    }

    String mix() {
        return puts.get() + " puts, " + deletes.get() + " deletes, " + txns.get() + " transactions, " + leased.get()
                + " leases";
    }
}
