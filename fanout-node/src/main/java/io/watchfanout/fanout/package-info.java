/**
 * The fan-out node: {@link io.watchfanout.fanout.FanoutNodeMain} (the command line),
 * {@link io.watchfanout.fanout.NodeConfig} (its settings) and {@link io.watchfanout.fanout.FanoutNode},
 * which wires the parts together: the watch core with its cache ({@code watch}), the
 * frame encoder ({@code frame}), the Kafka feed ({@code kafka}), the HTTP transport ({@code transport})
 * with the front ends on it ({@code v1}, {@code kube}, {@code gateway}), the etcd API ({@code etcd}) and the metrics ({@code metrics}); it starts them and, on SIGTERM, drains and stops them.
 *
 * <p>Imports: every package of the node, {@code io.watchfanout.common} (command-line
 * conventions), picocli and the Prometheus client. The node never imports the ingester
 * ({@code io.watchfanout.ingester}); the two share only {@code io.watchfanout.schema} and
 * {@code io.watchfanout.common}, and talk through Kafka.
 *
 * <p>The parts, the invariants they keep and the threads that run them: docs/ARCHITECTURE.md,
 * "Fan-out node" and "Concurrency model".
 */
package io.watchfanout.fanout;
