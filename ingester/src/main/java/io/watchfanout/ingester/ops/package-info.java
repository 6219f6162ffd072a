/**
 * How operators see the ingester: {@link io.watchfanout.ingester.ops.OpsServer} ({@code /metrics},
 * {@code /readyz}, {@code /livez}), {@link io.watchfanout.ingester.ops.IngesterMetrics} (the
 * Prometheus metrics), {@link io.watchfanout.ingester.ops.DependencyMonitor} (etcd and Kafka
 * probed every second on its own thread; docs/ARCHITECTURE.md, "Failures") and
 * {@link io.watchfanout.ingester.ops.IngesterReadiness} (why the ingester is not ready).
 *
 * <p>Imports: Undertow (the only package of the ingester that uses it), the Prometheus client,
 * jetcd and the Kafka admin client (for the probes); nothing else of the ingester.
 */
package io.watchfanout.ingester.ops;
