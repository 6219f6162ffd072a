package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.read.RevisionWait;
import io.watchfanout.fanout.watch.Arrival;
import io.watchfanout.fanout.watch.CurrentRevision;
import io.watchfanout.fanout.watch.WatchCore;

/**
 * A Kubernetes read's waits (the core's {@link RevisionWait}: a resourceVersion ahead of the node,
 * etcd's current revision for a consistent read, KEP-2340) answered as kube-apiserver's watch
 * cache answers them: 504 {@code Too large resource version} when the cache does not get there
 * within the node's {@code --resource-version-wait}, 503 when etcd's revision cannot be learned or
 * the node stops serving. Blocks the calling worker thread.
 *
 * <p>Thread-safe.
 */
final class KubeRevisionWait {
    private final WatchCore core;
    private final KubeSettings settings;
    private final RevisionWait wait;

    KubeRevisionWait(WatchCore core, KubeSettings settings, CurrentRevision currentRevision) {
        this.core = core;
        this.settings = settings;
        this.wait = new RevisionWait(core, settings.resourceVersionWait(), currentRevision);
    }

    /**
     * Waits until the cache is at etcd's current revision or later (nothing to wait for without
     * an etcd endpoint).
     *
     * @throws KubeError 503 when etcd's revision cannot be learned, 504 when the cache does not get there
     */
    void awaitConsistent() throws KubeError, InterruptedException {
        RevisionWait.Consistent c = wait.awaitConsistent();
        if (c.unlearned() != null) {
            throw KubeError.unavailable(
                    "a read without resourceVersion is a consistent read, and etcd's current revision could not be "
                            + "learned: " + c.unlearned()
                            + "; retry, or read with resourceVersion=0 for the node's state",
                    settings.retryAfterSeconds());
        }
        if (c.arrival() != null) {
            answer(c.arrival(), c.revision());
        }
    }

    /**
     * Blocks until the cache's revision is {@code >= rv}.
     *
     * @throws KubeError 504 Timeout (cause ResourceVersionTooLarge) when it is not within the wait,
     *     503 when the node stopped serving meanwhile
     */
    void await(long rv) throws KubeError, InterruptedException {
        answer(wait.await(rv), rv);
    }

    private void answer(Arrival a, long rv) throws KubeError {
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
