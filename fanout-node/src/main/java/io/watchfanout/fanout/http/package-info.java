/**
 * The HTTP API of the node (README.md, "The watch protocol"): {@link io.watchfanout.fanout.http.HttpApi}
 * assembles Undertow's listener on an XNIO worker and routes {@code /v1/watch}, {@code /v1/kv},
 * {@code /readyz}, {@code /livez} and {@code /metrics}; {@code WatchHandler} and
 * {@code WatchStream} serve watch streams on the IO threads with non-blocking gathered writes
 * (one HTTP chunk per write, framed here); {@code KvHandler} serves range reads on worker
 * threads; other front ends plug their routes in with {@code HttpApi.mount} (the Kubernetes API,
 * etcd's JSON gateway); the query and {@code Accept} parsing and the guard
 * that answers malformed request targets with a JSON {@code Status} live here too.
 *
 * <p>Threads: a {@code WatchStream} is confined to its connection's IO thread, woken through
 * {@code WakeUps} per IO thread (docs/ARCHITECTURE.md, "Concurrency model").
 *
 * <p>Imports: the HTTP transport, on Undertow and XNIO (as are the front ends mounted on it). It
 * uses {@code io.watchfanout.fanout.watch} and {@code .frame}, the schema's messages, protobuf and
 * the Prometheus client (the text format of {@code /metrics}); no front end (etcd, kube) and not
 * Kafka.
 */
package io.watchfanout.fanout.http;
