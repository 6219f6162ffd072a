package io.watchfanout.fanout.security;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

/**
 * The node's security counters, exported as {@code watchfanout_auth_*} and
 * {@code watchfanout_watch_limit*}: refusals by listener, verb and limit, the limits themselves,
 * admitted watches, revocations and reloads. Bumped when requests and watches start, never per
 * event. Thread-safe.
 */
final class SecurityStats extends Collector {
    /** Which limit refused a watch. */
    enum Limit {
        NODE,
        IDENTITY_CONCURRENT,
        IDENTITY_RATE
    }

    final Map<Listener, LongAdder> unauthenticated = new EnumMap<>(Listener.class);
    final Map<Verb, LongAdder> denied = new EnumMap<>(Verb.class);
    final Map<Limit, LongAdder> limited = new EnumMap<>(Limit.class);
    final LongAdder revoked = new LongAdder();
    final LongAdder reloads = new LongAdder();
    final LongAdder reloadFailures = new LongAdder();
    private final WatchLimits limits;
    private final IntSupplier grants;

    SecurityStats(WatchLimits limits, IntSupplier grants) {
        this.limits = limits;
        this.grants = grants;
        for (Listener l : Listener.values()) {
            unauthenticated.put(l, new LongAdder());
        }
        for (Verb v : Verb.values()) {
            denied.put(v, new LongAdder());
        }
        for (Limit l : Limit.values()) {
            limited.put(l, new LongAdder());
        }
    }

    @Override
    public List<MetricFamilySamples> collect() {
        CounterMetricFamily unauth = new CounterMetricFamily(
                "watchfanout_auth_unauthenticated_total",
                "Requests and streams refused for missing or invalid credentials (401 / UNAUTHENTICATED).",
                List.of("listener"));
        unauthenticated.forEach((l, n) -> unauth.addMetric(List.of(lower(l)), n.sum()));
        CounterMetricFamily deny = new CounterMetricFamily(
                "watchfanout_auth_denied_total",
                "Requests and watches refused by the policy (403 / PERMISSION_DENIED).",
                List.of("verb"));
        denied.forEach((v, n) -> deny.addMetric(List.of(v.ruleName()), n.sum()));
        CounterMetricFamily limit = new CounterMetricFamily(
                "watchfanout_watch_limited_total",
                "New watches refused by a limit (429 TooManyRequests).",
                List.of("limit"));
        limited.forEach((l, n) -> limit.addMetric(List.of(lower(l)), n.sum()));
        GaugeMetricFamily configured = new GaugeMetricFamily(
                "watchfanout_watch_limit",
                "The configured watch limits (0 = none): node watches, watches per identity, new watches per "
                        + "second per identity, burst per identity.",
                List.of("limit"));
        configured.addMetric(List.of("node"), limits.maxWatchers());
        configured.addMetric(List.of("identity_concurrent"), limits.maxPerIdentity());
        configured.addMetric(List.of("identity_rate"), limits.ratePerIdentity());
        configured.addMetric(List.of("identity_burst"), limits.burstPerIdentity());
        List<MetricFamilySamples> out = new ArrayList<>(List.of(unauth, deny, limit, configured));
        out.add(new GaugeMetricFamily(
                "watchfanout_auth_watch_grants",
                "Watches admitted and open (each counts against --max-watchers and its identity's limit).",
                grants.getAsInt()));
        out.add(new CounterMetricFamily(
                "watchfanout_auth_watches_revoked_total",
                "Open watches ended with 403 because a reloaded policy (or a changed Kubernetes role, binding or pod) "
                        + "no longer allows them.",
                revoked.sum()));
        out.add(new CounterMetricFamily(
                "watchfanout_auth_reloads_total",
                "Changed policy, token or key files (or etcd roles) taken into use.",
                reloads.sum()));
        out.add(new CounterMetricFamily(
                "watchfanout_auth_reload_failures_total",
                "Changed policy, token or key files (or etcd roles) that could not be read; the previous ones stay.",
                reloadFailures.sum()));
        return out;
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
