package io.watchfanout.ingester;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.common.KeyRange;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Where an empty events topic's history starts: the oldest revision etcd can still be read at
 * (its compaction revision, or revision 1 on an etcd never compacted), but no more than
 * {@code --initial-history-revisions} before etcd's current revision. The ingester publishes its
 * initial state as of that revision and then every event after it, so that the topic holds all
 * the history etcd holds: a watcher or informer that got a revision from etcd or kube-apiserver a
 * moment before the tier started resumes on the tier as it would on etcd.
 *
 * <p>etcd has no call that names its compaction revision (a watch learns it only when it is
 * refused), so it is found by bisection over range reads of one key at a revision: a read below
 * the compaction revision fails with "required revision has been compacted", one at or above it
 * succeeds. That is about log2(revisions) reads of at most one key each, once per empty topic.
 *
 * <p>Stateless; thread-safe over a thread-safe jetcd client.
 */
final class HistoryStart {
    private HistoryStart() {}

    /**
     * The oldest revision of {@code range} to publish from.
     *
     * @param etcd the ingester's etcd client
     * @param range the watched key range
     * @param maxRevisions how far back from the current revision to go at most, &gt;= 0; 0 starts
     *     at the current revision (no history)
     * @param requestTimeout bound of one range read
     * @return a revision in {@code [max(1, current - maxRevisions), current]} that etcd could be
     *     read at when it was looked up (a compaction may move past it before it is read: the
     *     caller retries then)
     * @throws ExecutionException when etcd fails a read for another reason than compaction
     * @throws TimeoutException when a read takes longer than {@code requestTimeout}
     * @throws InterruptedException when interrupted
     */
    static long oldestRevision(Client etcd, KeyRange range, long maxRevisions, Duration requestTimeout)
            throws ExecutionException, TimeoutException, InterruptedException {
        if (maxRevisions < 0) {
            throw new IllegalArgumentException("maxRevisions: " + maxRevisions + " (expected: >= 0)");
        }
        long current = read(etcd, range, 0, requestTimeout);
        long unreadable = Math.max(1, current - maxRevisions) - 1; // below the range looked at
        long readable = current;
        // Invariant: a read at `readable` succeeds; one at `unreadable` fails or is out of range.
        if (readable - unreadable > 1 && read(etcd, range, unreadable + 1, requestTimeout) > 0) {
            return unreadable + 1;
        }
        while (readable - unreadable > 1) {
            long mid = unreadable + (readable - unreadable) / 2;
            if (read(etcd, range, mid, requestTimeout) > 0) {
                readable = mid;
            } else {
                unreadable = mid;
            }
        }
        return readable;
    }

    /**
     * Reads at most one key of {@code range} at {@code revision} (0: the current one).
     *
     * @return etcd's current revision, or 0 when {@code revision} is compacted
     */
    private static long read(Client etcd, KeyRange range, long revision, Duration requestTimeout)
            throws ExecutionException, TimeoutException, InterruptedException {
        GetOption.Builder option = GetOption.builder()
                .withRange(ByteSequence.from(range.requestRangeEnd()))
                .withLimit(1)
                .withKeysOnly(true);
        if (revision > 0) {
            option.withRevision(revision);
        }
        try {
            return etcd.getKVClient()
                    .get(ByteSequence.from(range.requestKey()), option.build())
                    .get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                    .getHeader()
                    .getRevision();
        } catch (ExecutionException e) {
            if (revision > 0 && PublishFailures.compactedRead(e.getCause())) {
                return 0;
            }
            throw e;
        }
    }
}
