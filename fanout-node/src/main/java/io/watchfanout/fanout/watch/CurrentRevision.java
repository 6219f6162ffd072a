package io.watchfanout.fanout.watch;

import java.util.concurrent.CompletableFuture;

/**
 * Where a consistent read learns etcd's current revision (the etcd API's probe of etcd). A read
 * that must be as new as etcd ("most recent": no {@code resourceVersion}, Kubernetes' semantics)
 * waits until the cache has reached it.
 */
public interface CurrentRevision {
    /** etcd's current revision, or a failed future when etcd cannot be asked. Any thread. */
    CompletableFuture<Long> current();
}
