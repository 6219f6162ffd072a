package io.watchfanout.ingester.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.common.KeyRange;
import io.watchfanout.schema.StateDigestBuilder;
import io.watchfanout.schema.v1.StateDigest;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads the digest of a key range as etcd holds it at one revision ({@link StateDigest}), a page
 * at a time, pausing between pages so that etcd barely notices: etcd serves each page from its
 * MVCC store at that revision, as it serves a paginated list, and nothing is held but the sums.
 * Counts the pages and keys it reads, for the ingester's metrics.
 *
 * <p>Thread-safe (stateless over a thread-safe jetcd client, counters atomic); one digest at a
 * time per caller thread.
 */
public final class EtcdDigestReader {
    private final Client client;
    private final int pageSize;
    private final int keysPerRange;
    private final Duration pause;
    private final Duration requestTimeout;
    private final AtomicLong pages = new AtomicLong();
    private final AtomicLong keys = new AtomicLong();

    /**
     * @param client the jetcd client
     * @param pageSize keys per range request, {@code > 0}
     * @param keysPerRange keys per sub-range of the digest, {@code > 0}
     * @param pause the pause between two pages, {@code >= 0}
     * @param requestTimeout bound of one range request
     */
    public EtcdDigestReader(Client client, int pageSize, int keysPerRange, Duration pause, Duration requestTimeout) {
        if (pageSize <= 0 || keysPerRange <= 0 || pause.isNegative()) {
            throw new IllegalArgumentException(
                    "page size " + pageSize + ", keys per range " + keysPerRange + ", pause " + pause);
        }
        this.client = client;
        this.pageSize = pageSize;
        this.keysPerRange = keysPerRange;
        this.pause = pause;
        this.requestTimeout = requestTimeout;
    }

    /**
     * Reads the digest of {@code range} at {@code revision}.
     *
     * @param revision a revision etcd still holds, {@code > 0}
     * @throws ExecutionException when etcd fails a request; a revision compacted meanwhile fails
     *     with "required revision has been compacted" (the caller tries again later, at a newer one)
     * @throws TimeoutException when a request takes longer than the request timeout
     * @throws InterruptedException when interrupted
     */
    public StateDigest read(KeyRange range, long revision)
            throws ExecutionException, TimeoutException, InterruptedException {
        StateDigestBuilder digest = new StateDigestBuilder(revision, keysPerRange);
        ByteSequence end = ByteSequence.from(range.requestRangeEnd());
        ByteString from = range.requestKey();
        while (true) {
            GetOption option = GetOption.builder()
                    .withRange(end)
                    .withLimit(pageSize)
                    .withRevision(revision)
                    .build();
            GetResponse page = client.getKVClient()
                    .get(ByteSequence.from(from), option)
                    .get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
            pages.incrementAndGet();
            keys.addAndGet(page.getKvs().size());
            ByteString last = null;
            for (io.etcd.jetcd.KeyValue kv : page.getKvs()) {
                digest.add(EtcdEvents.toKeyValue(kv));
                last = ByteString.copyFrom(kv.getKey().getBytes());
            }
            if (!page.isMore() || last == null) {
                return digest.build();
            }
            from = last.concat(ByteString.copyFrom(new byte[] {0}));
            if (!pause.isZero()) {
                Thread.sleep(pause.toMillis());
            }
        }
    }

    /** Range requests sent for digests so far. */
    public long pagesRead() {
        return pages.get();
    }

    /** Key-values read for digests so far. */
    public long keysRead() {
        return keys.get();
    }
}
