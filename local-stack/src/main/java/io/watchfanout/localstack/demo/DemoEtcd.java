package io.watchfanout.localstack.demo;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The demo load's etcd: its writes (puts, deletes, transactions, each awaited up to
 * {@value #TIMEOUT_SECONDS} s and counted), the reads of its own keys, and the grants of the
 * events' leases.
 *
 * <p>Threads: one writer thread (the load's); the counts may be read from any thread.
 */
final class DemoEtcd {
    /** How long one request may take, in seconds. */
    static final long TIMEOUT_SECONDS = 5;
    /** Deletes per transaction when many go at once: below etcd's {@code --max-txn-ops} (128). */
    static final int MAX_DELETES_PER_TXN = 100;

    private final Client client;
    private final KV kv;
    // Written by the writer thread only; volatile for the readers of the counts.
    private volatile long writes;
    private volatile long transactions;

    DemoEtcd(Client client) {
        this.client = client;
        this.kv = client.getKVClient();
    }

    void put(String key, byte[] value) throws InterruptedException, ExecutionException, TimeoutException {
        await(kv.put(bytes(key), ByteSequence.from(value)));
        writes++;
    }

    void delete(String key) throws InterruptedException, ExecutionException, TimeoutException {
        await(kv.delete(bytes(key)));
        writes++;
    }

    /** Deletes {@code keys}, up to {@value #MAX_DELETES_PER_TXN} in one transaction. */
    void deleteAll(List<String> keys) throws InterruptedException, ExecutionException, TimeoutException {
        for (int from = 0; from < keys.size(); from += MAX_DELETES_PER_TXN) {
            txn(
                    List.of(),
                    keys.subList(from, Math.min(keys.size(), from + MAX_DELETES_PER_TXN)).stream()
                            .map(DemoEtcd::deleteOp)
                            .toList());
        }
    }

    /** One transaction: {@code ops} if every compare holds (nothing otherwise). */
    void txn(List<Cmp> compares, List<Op> ops) throws InterruptedException, ExecutionException, TimeoutException {
        await(kv.txn()
                .If(compares.toArray(Cmp[]::new))
                .Then(ops.toArray(Op[]::new))
                .commit());
        writes++;
        if (ops.size() > 1) {
            transactions++;
        }
    }

    /** The keys under {@code prefix} (no values), in key order. */
    List<String> keys(String prefix) throws InterruptedException, ExecutionException, TimeoutException {
        return await(kv.get(
                        bytes(prefix),
                        GetOption.builder().isPrefix(true).withKeysOnly(true).build()))
                .getKvs()
                .stream()
                .map(KeyValue::getKey)
                .map(k -> k.toString(StandardCharsets.UTF_8))
                .toList();
    }

    /** A new lease of {@code ttlSeconds} (nobody keeps it alive: it expires, and its keys go). */
    long grantLease(long ttlSeconds) throws InterruptedException, ExecutionException, TimeoutException {
        return await(client.getLeaseClient().grant(ttlSeconds)).getID();
    }

    static Op putOp(String key, byte[] value) {
        return Op.put(bytes(key), ByteSequence.from(value), PutOption.DEFAULT);
    }

    static Op putOp(String key, byte[] value, long lease) {
        return Op.put(
                bytes(key),
                ByteSequence.from(value),
                PutOption.builder().withLeaseId(lease).build());
    }

    static Op deleteOp(String key) {
        return Op.delete(bytes(key), DeleteOption.DEFAULT);
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Writes done so far (a transaction counts once). */
    long writes() {
        return writes;
    }

    /** Transactions of more than one operation done so far. */
    long transactions() {
        return transactions;
    }

    void close() {
        client.close();
    }

    private static <T> T await(CompletableFuture<T> future)
            throws InterruptedException, ExecutionException, TimeoutException {
        return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }
}
