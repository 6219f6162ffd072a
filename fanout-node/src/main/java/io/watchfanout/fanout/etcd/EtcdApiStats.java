package io.watchfanout.fanout.etcd;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the etcd API, exported as {@code watchfanout_etcd_api_*} (the watchers and frames
 * of its watches are in the node's per-encoding metrics, encodings {@code etcd} and
 * {@code etcd_prev_kv}), and the direct memory of grpc's transport buffers: what its pool holds
 * from the operating system, and what of it buffers in use pin (each response waiting to be
 * written is a copy in a buffer of its size). Thread-safe: {@code LongAdder}s bumped on
 * grpc's threads; the pool's figures are Netty's, read when scraped.
 */
public final class EtcdApiStats extends Collector {
    final LongAdder watchStreams = new LongAdder();
    final LongAdder watchResponses = new LongAdder();
    final LongAdder progressResponses = new LongAdder();
    final LongAdder forwarded = new LongAdder();
    final LongAdder rangesFromCache = new LongAdder();
    final LongAdder consistentReadFallbacks = new LongAdder();

    /** Open Watch streams (each may carry many watches). */
    public long watchStreams() {
        return watchStreams.sum();
    }

    /** Calls forwarded to etcd so far. */
    public long forwarded() {
        return forwarded.sum();
    }

    /** Range calls answered from the cache so far. */
    public long rangesFromCache() {
        return rangesFromCache.sum();
    }

    /** Consistent reads that the cache did not reach in time and that went to etcd. */
    public long consistentReadFallbacks() {
        return consistentReadFallbacks.sum();
    }

    @Override
    public List<MetricFamilySamples> collect() {
        return List.of(
                new GaugeMetricFamily(
                        "watchfanout_etcd_api_watch_streams", "Open etcd API Watch streams.", watchStreams.sum()),
                new CounterMetricFamily(
                        "watchfanout_etcd_api_watch_responses_total",
                        "WatchResponses sent on etcd API Watch streams (events, created, canceled, progress).",
                        watchResponses.sum()),
                new CounterMetricFamily(
                        "watchfanout_etcd_api_progress_responses_total",
                        "Progress responses (progress_notify and answers to WatchProgressRequest).",
                        progressResponses.sum()),
                new CounterMetricFamily(
                        "watchfanout_etcd_api_forwarded_total",
                        "etcd API calls forwarded to etcd (everything but Watch and KV.Range from the cache).",
                        forwarded.sum()),
                new CounterMetricFamily(
                        "watchfanout_etcd_api_ranges_from_cache_total",
                        "KV.Range calls answered from the cache.",
                        rangesFromCache.sum()),
                new CounterMetricFamily(
                        "watchfanout_etcd_api_consistent_read_fallbacks_total",
                        "Consistent reads forwarded to etcd because the cache did not reach etcd's revision within "
                                + "--resource-version-wait.",
                        consistentReadFallbacks.sum()),
                transportBufferBytes());
    }

    private GaugeMetricFamily transportBufferBytes() {
        GaugeMetricFamily bytes = new GaugeMetricFamily(
                "watchfanout_etcd_api_transport_buffer_bytes",
                "Direct memory of grpc's transport buffers: held by its pool (allocated), pinned by buffers in "
                        + "use (in_use).",
                List.of("state"));
        bytes.addMetric(List.of("allocated"), TransportBuffers.allocatedBytes());
        bytes.addMetric(List.of("in_use"), TransportBuffers.inUseBytes());
        return bytes;
    }
}
