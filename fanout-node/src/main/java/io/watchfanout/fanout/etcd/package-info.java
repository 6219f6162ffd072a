/**
 * etcd's v3 gRPC API on the node (README.md, "etcd's v3 API"): {@link io.watchfanout.fanout.etcd.EtcdApi}
 * serves {@code etcdserverpb.Watch} and {@code KV.Range} from the watch cache and forwards every
 * other call to etcd, so that clients written for etcd (etcdctl, jetcd, clientv3, etcd3 for
 * Node) use the tier by changing their endpoint list. {@code EtcdWatchStream} is one Watch
 * stream over the core's watchers with the etcd encodings; {@code EtcdRangeService} the cached
 * ranges and consistent reads; {@code EtcdForwarder} the fallback to etcd; {@code JsonGateway}
 * etcd's grpc-gateway paths over the same services, for the HTTP port.
 *
 * <p>Threads: a Watch stream's state is confined to its lane, one thread ({@code WatchLanes}): the
 * event loop of its connection, which the node gives grpc, or for in-process calls one of a few
 * threads of its own (docs/ARCHITECTURE.md, "Concurrency model").
 *
 * <p>Imports: grpc-java, etcd's API messages ({@code io.etcd.jetcd.api}) and protobuf's JSON format; the node's
 * {@code watch} and {@code frame} packages (it registers its encodings, {@code EtcdEncodings}, with the latter); common's {@code EtcdSecurity} ({@code EtcdChannel}'s TLS,
 * {@code EtcdCredentials}' user). Not Undertow and not Kafka.
 */
package io.watchfanout.fanout.etcd;
