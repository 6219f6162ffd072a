package io.watchfanout.fanout.metrics;

import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import io.prometheus.client.hotspot.DefaultExports;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.kafka.KafkaHistory;
import io.watchfanout.fanout.kafka.RebuildProgress;
import io.watchfanout.fanout.watch.CloseReason;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchStats;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The node's Prometheus metrics (prefix {@code watchfanout_}), read at scrape time from the
 * counters the core, the frame encoder and the rebuild keep, so the hot path only bumps
 * {@code LongAdder}s. One registry per node (not the default one), so several nodes can
 * live in one JVM in tests.
 */
public final class NodeMetrics extends Collector {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final WatchCore core;
    private final RebuildProgress rebuild;
    private final KafkaHistory older;

    private NodeMetrics(WatchCore core, RebuildProgress rebuild, KafkaHistory older) {
        this.core = core;
        this.rebuild = rebuild;
        this.older = older;
    }

    /**
     * A registry with the node's metrics and the JVM's (memory, GC, threads).
     *
     * @param rebuild the rebuild's progress, or null without Kafka (tests)
     */
    public static CollectorRegistry registry(WatchCore core, RebuildProgress rebuild) {
        return registry(core, rebuild, null);
    }

    /**
     * As {@link #registry(WatchCore, RebuildProgress)}, with the reads of older history from the
     * events topic ({@code watchfanout_older_history_*}), or null without them.
     */
    public static CollectorRegistry registry(WatchCore core, RebuildProgress rebuild, KafkaHistory older) {
        CollectorRegistry registry = new CollectorRegistry(true);
        new NodeMetrics(core, rebuild, older).register(registry);
        core.stats().eventLatency().register(registry);
        DefaultExports.register(registry);
        return registry;
    }

    @Override
    public List<MetricFamilySamples> collect() {
        List<MetricFamilySamples> out = new ArrayList<>();
        WatchStats s = core.stats();
        FrameEncoder enc = core.frameEncoder();
        List<String> encodingLabel = List.of("encoding");

        GaugeMetricFamily watchers =
                new GaugeMetricFamily("watchfanout_watchers", "Open watch streams by encoding.", encodingLabel);
        CounterMetricFamily delivered = new CounterMetricFamily(
                "watchfanout_frames_delivered_total",
                "Frames handed to watch streams (events, bookmarks, errors), by encoding.",
                encodingLabel);
        CounterMetricFamily bytes = new CounterMetricFamily(
                "watchfanout_bytes_sent_total", "Bytes written to watch streams, by encoding.", encodingLabel);
        CounterMetricFamily encoded = new CounterMetricFamily(
                "watchfanout_frames_encoded_total",
                "Frames encoded, by encoding and kind; each event is encoded at most once per encoding.",
                List.of("encoding", "kind"));
        for (Encoding e : Encoding.all()) {
            String name = e.name().toLowerCase(Locale.ROOT);
            watchers.addMetric(List.of(name), core.status().watcherCount(e));
            delivered.addMetric(List.of(name), s.framesDelivered(e));
            bytes.addMetric(List.of(name), s.bytesSent(e));
            for (FrameKind k : FrameKind.values()) {
                encoded.addMetric(List.of(name, k.name().toLowerCase(Locale.ROOT)), enc.encodes(e, k));
            }
        }
        out.add(watchers);
        out.add(delivered);
        out.add(bytes);
        out.add(encoded);
        out.add(gauge(
                "watchfanout_watchers_live",
                "Watchers in live dispatch.",
                core.status().liveWatcherCount()));
        out.add(counter(
                "watchfanout_events_dispatched_total",
                "Events applied and dispatched to matching watchers.",
                s.eventsDispatched()));
        out.add(counter(
                "watchfanout_watcher_visits_total",
                "Watchers visited by dispatch (index matches).",
                core.status().watcherVisits()));
        out.add(counter("watchfanout_bookmarks_sent_total", "BOOKMARK frames queued to watchers.", s.bookmarksSent()));
        out.add(counter(
                "watchfanout_watchers_parked_total",
                "Live watchers parked after overflowing their queue.",
                s.parked()));
        out.add(counter(
                "watchfanout_watchers_unparked_total",
                "Parked watchers that caught up and rejoined live dispatch.",
                s.unparked()));
        out.add(counter(
                "watchfanout_watchers_expired_total",
                "Slow watchers ended with 410 Expired after falling behind the history window.",
                s.endedExpired()));
        CounterMetricFamily catchUp = new CounterMetricFamily(
                "watchfanout_catchup_events_total",
                "Events handed to watchers catching up (resumes and parked watchers), by where they came from: the "
                        + "history window, or the events topic (older history).",
                List.of("source"));
        catchUp.addMetric(List.of("window"), s.catchUpFromWindow());
        catchUp.addMetric(List.of("kafka"), s.catchUpFromOlder());
        out.add(catchUp);
        out.add(counter(
                "watchfanout_resumes_from_kafka_total",
                "Watches accepted from a revision older than the history window and served from the events topic: "
                        + "relists avoided.",
                s.resumedFromOlder()));
        if (older != null) {
            out.add(counter(
                    "watchfanout_older_history_reads_started_total",
                    "Reads of the events topic started for watches from before the window (one per span, shared by "
                            + "its watchers).",
                    older.readsStarted()));
            out.add(counter(
                    "watchfanout_older_history_records_read_total",
                    "Events-topic records fetched by reads of older history.",
                    older.recordsRead()));
            out.add(counter(
                    "watchfanout_older_history_events_read_total",
                    "Events decoded by reads of older history, once per read whatever its number of watchers.",
                    older.eventsRead()));
            out.add(gauge(
                    "watchfanout_older_history_reads",
                    "Reads of older history holding events (running, in use " + "or lingering for joiners).",
                    older.readsHeld()));
            out.add(gauge(
                    "watchfanout_older_history_bytes",
                    "Bytes of events held by reads of older history.",
                    older.bytesHeld()));
            long floor = older.floorRevision();
            out.add(gauge(
                    "watchfanout_older_history_floor_revision",
                    "The oldest revision a watch may resume from "
                            + "according to the events topic's first retained record (-1 while unknown).",
                    floor == Long.MAX_VALUE ? -1 : floor));
        }
        out.add(counter(
                "watchfanout_resyncs_total",
                "Resync records applied (etcd history compacted); each ends every open stream with 410 Expired.",
                s.resyncs()));
        out.add(counter(
                "watchfanout_watchers_ended_resync_total",
                "Watch streams ended with 410 Expired by a resync.",
                s.endedByResync()));
        out.add(counter(
                "watchfanout_streams_closed_stalled_total",
                "Connections closed because an ended stream's client did not take its last frames in time.",
                s.closedStalled()));
        CounterMetricFamily closed = new CounterMetricFamily(
                "watchfanout_watchers_closed_total",
                "Watch streams whose connection was closed before the stream ended, each removing its watcher, by reason: "
                        + "client_closed (the client hung up), connection_error (a reset, unanswered TCP keepalive probes, "
                        + "retransmissions given up), write_timeout (frames waited and the socket took no byte for "
                        + "--write-timeout), unacknowledged (the kernel retried bytes in flight for --write-timeout without "
                        + "an acknowledgement).",
                List.of("reason"));
        for (CloseReason r : CloseReason.values()) {
            closed.addMetric(List.of(r.label()), s.closed(r));
        }
        out.add(closed);
        out.add(gauge(
                "watchfanout_watcher_queued_frames",
                "Frames waiting in watchers' bounded queues, all watchers.",
                core.status().queuedFrames()));
        out.add(gauge(
                "watchfanout_frames_memoized",
                "Frames memoized by events of the history window.",
                enc.memoizedFrames()));
        out.add(gauge(
                "watchfanout_frames_memoized_bytes",
                "Bytes of the frames memoized by events of the history window.",
                enc.memoizedBytes()));
        out.add(gauge(
                "watchfanout_cache_revision",
                "The newest revision the cache is consistent to.",
                core.status().revision()));
        out.add(gauge(
                "watchfanout_cache_revision_age_seconds",
                "Seconds since the cache's revision last advanced (event or progress record); growing well past the "
                        + "interval between etcd writes, the ingester or etcd is not feeding this node.",
                core.status().revisionAgeSeconds()));
        out.add(gauge(
                "watchfanout_cache_keys", "Keys in the cache.", core.status().keyCount()));
        out.add(gauge(
                "watchfanout_history_events",
                "Events in the history window.",
                core.status().historySize()));
        out.add(gauge(
                "watchfanout_history_oldest_revision",
                "Revision of the oldest event in the history window.",
                core.status().oldestHistoryRevision()));
        out.add(gauge(
                "watchfanout_history_start_revision",
                "Watches from a revision older than this get 410 Expired.",
                core.status().historyStartRevision()));
        out.add(gauge(
                "watchfanout_cache_ready",
                "1 when the node serves (caught up with Kafka) and its feed is fresh "
                        + "(see watchfanout_feed_staleness_seconds); /readyz answers the same.",
                core.readiness().isRebuilt() && core.readiness().feedProblem() == null ? 1 : 0));
        out.add(gauge(
                "watchfanout_cache_failed",
                "1 when the node stopped serving on bad data (see the log).",
                core.readiness().failure() != null ? 1 : 0));
        if (rebuild != null) {
            out.add(gauge(
                    "watchfanout_rebuild_duration_seconds",
                    "Seconds the rebuild from Kafka took (-1 until done).",
                    rebuild.rebuildSeconds()));
            out.add(gauge(
                    "watchfanout_rebuild_keys_loaded", "Keys loaded from the state topic.", rebuild.keysLoaded()));
            out.add(gauge(
                    "watchfanout_rebuild_state_progress_ratio",
                    "Fraction of the state topic read (0..1).",
                    rebuild.stateRatio()));
            out.add(gauge(
                    "watchfanout_rebuild_events_progress_ratio",
                    "Fraction of the events topic's end offset at start that was applied (0..1).",
                    rebuild.eventsRatio()));
            out.add(counter(
                    "watchfanout_rebuild_restarts_total",
                    "Reads of the state topic dropped and started again because they took half its delete.retention.ms "
                            + "or more (a tombstone may have been removed before it was read).",
                    rebuild.rebuildRestarts()));
            CounterMetricFamily digests = new CounterMetricFamily(
                    "watchfanout_digests_total",
                    "Digests of etcd's state (published by the ingester) compared with the cache, by outcome: equal, "
                            + "different (the node stops serving), too_old (further back than the revisions kept).",
                    List.of("outcome"));
            for (String outcome : List.of("equal", "different", "too_old")) {
                digests.addMetric(List.of(outcome), rebuild.digests(outcome));
            }
            out.add(digests);
            long verified = rebuild.digestVerifiedMillis();
            out.add(gauge(
                    "watchfanout_digest_verified_timestamp_seconds",
                    "When the cache was last found equal to etcd's digest (Unix time); NaN before.",
                    verified == 0 ? Double.NaN : verified / 1000.0));
            out.add(gauge(
                    "watchfanout_digest_verified_revision",
                    "The etcd revision of the last digest the cache was found equal to; 0 before.",
                    rebuild.digestVerifiedRevision()));
            long retention = rebuild.deleteRetentionMillis();
            out.add(gauge(
                    "watchfanout_state_delete_retention_seconds",
                    "The state topic's delete.retention.ms as last read from Kafka, in seconds; a rebuild's read of the "
                            + "state topic is trusted only if it takes less than half of it. NaN before it is known.",
                    retention < 0 ? Double.NaN : retention / 1000.0));
            long lag = rebuild.consumerLag();
            out.add(gauge(
                    "watchfanout_consumer_lag_records",
                    "Events-topic records not yet read; NaN when unknown (Kafka does not answer).",
                    lag < 0 ? Double.NaN : lag));
            out.add(gauge(
                    "watchfanout_feed_staleness_seconds",
                    "Seconds since the ingester wrote the newest record this node read (events, progress, heartbeats); "
                            + "past --max-feed-staleness /readyz fails. NaN before the first record.",
                    rebuild.feedStalenessSeconds()));
        }
        if (THREADS.isThreadAllocatedMemorySupported() && THREADS.isThreadAllocatedMemoryEnabled()) {
            out.add(counter(
                    "watchfanout_heap_allocated_bytes_total",
                    "Bytes allocated on the heap by all of the node's threads since it started, ended threads "
                            + "included (the allocation rate behind GC pressure).",
                    THREADS.getTotalThreadAllocatedBytes()));
        }
        return out;
    }

    private static GaugeMetricFamily gauge(String name, String help, double value) {
        return new GaugeMetricFamily(name, help, value);
    }

    private static CounterMetricFamily counter(String name, String help, double value) {
        return new CounterMetricFamily(name, help, value);
    }
}
