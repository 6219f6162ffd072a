/**
 * The node's Prometheus metrics ({@link io.watchfanout.fanout.metrics.NodeMetrics}), read at
 * scrape time from the counters of the watch core, the frame encoder and the rebuild, so that the
 * hot path only bumps {@code LongAdder}s.
 *
 * <p>Imports: the Prometheus client, {@code io.watchfanout.fanout.watch},
 * {@code io.watchfanout.fanout.frame} and {@code io.watchfanout.fanout.kafka}'s
 * {@code RebuildProgress}; neither Undertow nor the Kafka client library.
 */
package io.watchfanout.fanout.metrics;
