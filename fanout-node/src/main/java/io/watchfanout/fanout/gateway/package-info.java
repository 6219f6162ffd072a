/**
 * etcd's JSON gateway ({@code POST /v3/...}) on the node's HTTP listener: {@code GatewayHandler}
 * reads a request's body, authenticates it and hands it to the etcd API's
 * {@link io.watchfanout.fanout.etcd.JsonGateway}; {@code GatewayResponse} writes the answer's
 * lines on the exchange's IO thread. Mounted with the HTTP transport's neutral
 * {@link io.watchfanout.fanout.transport.HttpApi#mount}, so that the HTTP transport imports no front end
 * and the etcd API (gRPC only) no Undertow.
 *
 * <p>Imports: {@code io.watchfanout.fanout.etcd}'s and {@code .transport}'s public parts, Undertow and
 * XNIO, {@code .watch} and {@code .frame}; not Kafka, not the etcd client.
 */
package io.watchfanout.fanout.gateway;
