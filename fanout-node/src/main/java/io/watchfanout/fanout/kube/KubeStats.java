package io.watchfanout.fanout.kube;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.watchfanout.kube.codec.AtRest;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The Kubernetes API's counters, exported as {@code watchfanout_kube_*}: reads served, fields the
 * node's schema does not know (dropped from JSON answers, announced with a {@code Warning}
 * header; a cluster newer than the node's schema), and stored objects the node could not decode
 * (answered with 500). Bumped once per request or object, never per byte. Thread-safe.
 */
public final class KubeStats extends Collector {
    final LongAdder reads = new LongAdder();
    final LongAdder unknownFields = new LongAdder();
    final LongAdder undecodable = new LongAdder();

    @Override
    public List<MetricFamilySamples> collect() {
        return List.of(
                new CounterMetricFamily(
                        "watchfanout_kube_reads_total",
                        "Kubernetes API gets, lists and discovery reads answered (any status).",
                        reads.sum()),
                new CounterMetricFamily(
                        "watchfanout_kube_unknown_fields_total",
                        "Fields of stored objects unknown to the node's Kubernetes schema, left out of JSON answers "
                                + "(protobuf answers keep them).",
                        unknownFields.sum()),
                new CounterMetricFamily(
                        "watchfanout_kube_undecodable_objects_total",
                        "Stored objects the node could not decode (corrupt, CBOR, encrypted at rest), answered with 500.",
                        undecodable.sum()),
                new CounterMetricFamily(
                        "watchfanout_kube_undecryptable_objects_total",
                        "Values encrypted at rest the node could not open (a KMS provider, a key "
                                + "--encryption-provider-config does not give, a failed tag), answered as undecodable.",
                        AtRest.failures()),
                new CounterMetricFamily(
                        "watchfanout_kube_watch_undecodable_events_total",
                        "Watch events whose stored object the node could not decode, sent as an ERROR event (500) "
                                + "once per event and encoding.",
                        KubeEncodings.UNDECODABLE.sum()),
                new CounterMetricFamily(
                        "watchfanout_kube_watch_unknown_fields_events_total",
                        "JSON watch events whose object had fields unknown to the node's schema (left out), once per "
                                + "event.",
                        KubeEncodings.UNKNOWN_FIELDS.sum()));
    }
}
