package io.watchfanout.ingester.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.common.KeyRange;
import io.watchfanout.schema.v1.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads a key range of etcd at one fixed revision, a page at a time, as Kubernetes'
 * paginated list does: the first page fixes the revision R, every later page is read at
 * R, starting after the last key of the page before.
 *
 * <p>Thread-safe (stateless over a thread-safe jetcd client).
 */
public final class EtcdSnapshotReader {
    private final Client client;
    private final int pageSize;
    private final Duration requestTimeout;

    /**
     * @param client the jetcd client
     * @param pageSize keys per range request, &gt; 0
     * @param requestTimeout bound of one range request
     */
    public EtcdSnapshotReader(Client client, int pageSize, Duration requestTimeout) {
        if (pageSize <= 0) {
            throw new IllegalArgumentException("pageSize: " + pageSize + " (expected: > 0)");
        }
        this.client = client;
        this.pageSize = pageSize;
        this.requestTimeout = requestTimeout;
    }

    /**
     * Reads every key of {@code range} at the current revision.
     *
     * @throws ExecutionException when etcd fails a request (for example the revision was
     *     compacted between pages: the caller retries)
     * @throws TimeoutException when a request takes longer than the request timeout
     * @throws InterruptedException when interrupted
     */
    public EtcdSnapshot read(KeyRange range) throws ExecutionException, TimeoutException, InterruptedException {
        return read(range, 0);
    }

    /**
     * Reads every key of {@code range} at {@code atRevision}, or at the current revision
     * when it is 0.
     *
     * @throws ExecutionException when etcd fails a request; a revision below etcd's
     *     compaction revision fails with an {@code EtcdException} whose message says
     *     "required revision has been compacted"
     * @throws TimeoutException when a request takes longer than the request timeout
     * @throws InterruptedException when interrupted
     */
    public EtcdSnapshot read(KeyRange range, long atRevision)
            throws ExecutionException, TimeoutException, InterruptedException {
        ByteSequence end = ByteSequence.from(range.requestRangeEnd());
        ByteString from = range.requestKey();
        long revision = atRevision;
        List<KeyValue> kvs = new ArrayList<>();
        while (true) {
            GetOption.Builder option = GetOption.builder().withRange(end).withLimit(pageSize);
            if (revision != 0) {
                option.withRevision(revision);
            }
            GetResponse page = client.getKVClient()
                    .get(ByteSequence.from(from), option.build())
                    .get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
            if (revision == 0) {
                revision = page.getHeader().getRevision();
            }
            for (io.etcd.jetcd.KeyValue kv : page.getKvs()) {
                kvs.add(EtcdEvents.toKeyValue(kv));
            }
            if (!page.isMore() || page.getKvs().isEmpty()) {
                return new EtcdSnapshot(revision, kvs);
            }
            from = kvs.get(kvs.size() - 1).getKey().concat(ByteString.copyFrom(new byte[] {0}));
        }
    }
}
