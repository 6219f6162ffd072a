/**
 * The node's own API, {@code /v1} on the HTTP transport (README.md, "The watch protocol"):
 * {@link io.watchfanout.fanout.v1.V1Api} mounts it and routes {@code GET /v1/watch}
 * ({@code WatchHandler}: parameters, {@code Accept}, Server-Sent Events with
 * {@code Last-Event-ID}, {@code sinceTime}; the watch opened through the transport's
 * {@code WatchStreams}, on the core's one entry as every front end's) and {@code GET /v1/kv}
 * ({@code KvHandler}: range reads on worker threads with Kubernetes' list semantics,
 * {@code ListRead} and the {@code ContinueToken}).
 *
 * <p>Imports: the HTTP transport's public parts, {@code io.watchfanout.fanout.watch},
 * {@code .frame} and {@code .security}; no other front end ({@code etcd}, {@code kube},
 * {@code gateway}), not the Kubernetes codec, not Kafka.
 */
package io.watchfanout.fanout.v1;
