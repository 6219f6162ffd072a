/**
 * The node's HTTP transport, under every front end on the HTTP port (README.md, "The watch
 * protocol"): {@link io.watchfanout.fanout.transport.HttpApi} assembles Undertow's listener on an
 * XNIO worker (TLS, TCP keepalive, request headers bounded), serves {@code /readyz},
 * {@code /livez} and {@code /metrics}, and routes every other path to the front end mounted at its
 * prefix ({@code HttpApi.mount}: the node's own {@code /v1}, the Kubernetes API, etcd's JSON
 * gateway); {@code WatchStreams} opens their watches through the core's one entry and
 * {@code WatchStream} streams them on the IO threads with non-blocking gathered writes (one HTTP
 * chunk per write, framed here), with the write timeout, the stalled-close bound and the
 * {@code UnacknowledgedSweeper}. The parts every front end shares live here too: CORS, the
 * request's credentials ({@code HttpAccess}), query parsing ({@code QueryParams}), error bodies
 * ({@code ApiException}, {@code Responses}, {@code HttpStatuses}: a request's own faults), and the
 * guards that answer malformed request targets with a JSON {@code Status}.
 *
 * <p>Threads: a {@code WatchStream} is confined to its connection's IO thread, woken through
 * {@code WakeUps} per IO thread (docs/ARCHITECTURE.md, "Concurrency model").
 *
 * <p>Imports: Undertow and XNIO (as do the front ends mounted on it), {@code
 * io.watchfanout.fanout.watch} and {@code .frame}, {@code .security}, the schema's messages,
 * protobuf and the Prometheus client (the text format of {@code /metrics}); no front end
 * ({@code v1}, {@code etcd}, {@code kube}, {@code gateway}) and not Kafka.
 */
package io.watchfanout.fanout.transport;
