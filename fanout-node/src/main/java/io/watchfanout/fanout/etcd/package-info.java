/**
 * etcd's v3 gRPC API on the node (README.md, "etcd's v3 API"): {@link io.watchfanout.fanout.etcd.EtcdApi}
 * serves {@code etcdserverpb.Watch} and {@code KV.Range} from the watch cache and forwards every
 * other call to etcd, so that clients written for etcd (etcdctl, jetcd, clientv3, etcd3 for
 * Node) use the tier by changing their endpoint list.
 *
 * <p>Imports: grpc-java and etcd's API messages ({@code io.etcd.jetcd.api}); the node's
 * {@code watch}, {@code cache} and {@code frame} packages. Not Undertow and not Kafka.
 */
package io.watchfanout.fanout.etcd;
