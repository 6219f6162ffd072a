package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.watch.Arrival;
import io.watchfanout.fanout.watch.CurrentRevision;
import io.watchfanout.fanout.watch.WatchCore;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Where a Kubernetes read waits for the revision it must be answered at: a resourceVersion ahead
 * of the node, and etcd's current revision for a consistent read (no resourceVersion, KEP-2340),
 * learned from the node's {@link CurrentRevision} source. Blocks the calling worker thread for up
 * to the node's {@code --resource-version-wait}, then answers as kube-apiserver's watch cache
 * does: 504 {@code Too large resource version}; the wait itself is the core's one entry
 * ({@link WatchCore#awaitRevision(long, java.time.Duration, java.util.concurrent.Executor,
 * java.util.function.Consumer)}).
 *
 * <p>Thread-safe.
 */
final class KubeRevisionWait {
    private final WatchCore core;
    private final KubeSettings settings;
    /** etcd's current revision, or null (then a consistent read is at the node's revision). */
    private final CurrentRevision currentRevision;

    KubeRevisionWait(WatchCore core, KubeSettings settings, CurrentRevision currentRevision) {
        this.core = core;
        this.settings = settings;
        this.currentRevision = currentRevision;
    }

    /**
     * Waits until the cache is at etcd's current revision or later (nothing to wait for without
     * an etcd endpoint).
     *
     * @throws KubeError 503 when etcd's revision cannot be learned, 504 when the cache does not get there
     */
    void awaitConsistent() throws KubeError, InterruptedException {
        if (currentRevision == null) {
            return;
        }
        long etcd;
        try {
            etcd = currentRevision.current().get(settings.resourceVersionWait().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw KubeError.unavailable(
                    "a read without resourceVersion is a consistent read, and etcd's current revision could not be "
                            + "learned: " + (e.getCause() != null ? e.getCause() : e)
                            + "; retry, or read with resourceVersion=0 for the node's state",
                    settings.retryAfterSeconds());
        }
        await(etcd);
    }

    /**
     * Blocks until the cache's revision is {@code >= rv}.
     *
     * @throws KubeError 504 Timeout (cause ResourceVersionTooLarge) when it is not within the wait,
     *     503 when the node stopped serving meanwhile
     */
    void await(long rv) throws KubeError, InterruptedException {
        Arrival a = core.awaitRevision(rv, settings.resourceVersionWait());
        switch (a.outcome()) {
            case REACHED:
                return;
            case TIMED_OUT:
                throw KubeError.tooLargeResourceVersion(rv, core.status().revision(), settings.retryAfterSeconds());
            default:
                throw KubeError.unavailable(a.status().getMessage(), settings.retryAfterSeconds());
        }
    }
}
